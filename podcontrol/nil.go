package podcontrol

import (
	"reflect"
)

// isNil reports whether v is nil or a typed nil pointer stored in an
// interface, either of which would panic on the first accessor call.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Func:
		return rv.IsNil()
	}
	return false
}
