package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// fieldErr is what the tests compare of a field error: the parts upstream's
// tests compare, without Origin and the other bookkeeping later
// apimachinery versions add.
type fieldErr struct {
	Type     field.ErrorType
	Field    string
	BadValue any
	Detail   string
}

func summarize(errs field.ErrorList) []fieldErr {
	if len(errs) == 0 {
		return nil
	}
	out := make([]fieldErr, 0, len(errs))
	for _, e := range errs {
		out = append(out, fieldErr{e.Type, e.Field, e.BadValue, e.Detail})
	}
	return out
}
