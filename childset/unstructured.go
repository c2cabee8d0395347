package childset

import (
	"fmt"
	"math"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// Owners held as unstructured objects (custom resources read through the
// dynamic client) carry their spec as JSON values, which an API server
// without a schema, or a client bypassing it, may fill with anything.
// These two readers turn the fields a Spec needs into values or clear
// errors, never a panic, so a Spec over the dynamic client stays a few
// lines long.

// NestedReplicas reads a replica count at fields of obj (an unstructured
// object's content, such as u.Object). Absent or null gives def, as the API
// server defaults a ReplicaSet's nil spec.replicas to 1. A negative value,
// a value past int32, a fraction or a value that is not a number is an
// error naming the field.
func NestedReplicas(obj map[string]any, def int32, fields ...string) (int32, error) {
	path := strings.Join(fields, ".")
	v, found, err := unstructured.NestedFieldNoCopy(obj, fields...)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if !found || v == nil {
		return def, nil
	}
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case int32:
		n = int64(x)
	case int:
		n = int64(x)
	case float64:
		// encoding/json decodes every number as float64; a whole one is
		// an integer.
		if x != math.Trunc(x) || math.IsInf(x, 0) || math.Abs(x) > math.MaxInt32+1 {
			return 0, fmt.Errorf("%s must be a whole number, not %v", path, x)
		}
		n = int64(x)
	default:
		return 0, fmt.Errorf("%s must be an integer, not %T %v", path, v, v)
	}
	if n < 0 || n > math.MaxInt32 {
		return 0, fmt.Errorf("%s must be between 0 and %d, not %d", path, math.MaxInt32, n)
	}
	return int32(n), nil
}

// NestedSelector reads a metav1.LabelSelector at fields of obj and converts
// it. Absent, null, not an object, or not a valid selector is an error
// naming the field. An empty selector is returned as it is: CheckSelector,
// which the core applies before any write, refuses it.
func NestedSelector(obj map[string]any, fields ...string) (labels.Selector, error) {
	path := strings.Join(fields, ".")
	v, found, err := unstructured.NestedFieldNoCopy(obj, fields...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	raw, isMap := v.(map[string]any)
	switch {
	case !found || v == nil:
		return nil, fmt.Errorf("%s is missing", path)
	case !isMap:
		return nil, fmt.Errorf("%s must be an object, not %T", path, v)
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sel, nil
}
