// Package nilcheck tells whether a value held in an interface is nil, either
// the interface itself or the pointer, map, slice, channel or function it
// holds: a (*appsv1.ReplicaSet)(nil) passed as a runtime.Object is not == nil,
// yet every method call on it panics.
package nilcheck

import "reflect"

// IsNil reports whether v is a nil interface or holds a nil pointer, map,
// slice, channel, function or interface. It does not allocate.
func IsNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Chan, reflect.Func, reflect.Interface, reflect.UnsafePointer:
		return rv.IsNil()
	default:
		return false
	}
}
