package childset

import (
	"fmt"
	"math"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// NestedRollingUpdate reads a rolling update at fields of obj (an
// unstructured object's content): maxSurge and maxUnavailable, each a
// number or a percentage string, and partition, a number. Absent or null
// fields are nil (the defaults) or 0. A value of another type, a fraction,
// or a configuration RollingUpdate.Bounds refuses is an error naming the
// field, so a Spec can refuse it from NewChild before any write.
func NestedRollingUpdate(obj map[string]any, fields ...string) (RollingUpdate, error) {
	path := strings.Join(fields, ".")
	v, found, err := unstructured.NestedFieldNoCopy(obj, fields...)
	if err != nil {
		return RollingUpdate{}, fmt.Errorf("%s: %w", path, err)
	}
	if !found || v == nil {
		return RollingUpdate{}, nil
	}
	if _, isMap := v.(map[string]any); !isMap {
		return RollingUpdate{}, fmt.Errorf("%s must be an object, not %T", path, v)
	}
	var u RollingUpdate
	if u.MaxSurge, err = nestedIntOrString(obj, append(fields, "maxSurge")...); err != nil {
		return RollingUpdate{}, err
	}
	if u.MaxUnavailable, err = nestedIntOrString(obj, append(fields, "maxUnavailable")...); err != nil {
		return RollingUpdate{}, err
	}
	if u.Partition, err = NestedReplicas(obj, 0, append(fields, "partition")...); err != nil {
		return RollingUpdate{}, err
	}
	// The checks that do not depend on the replica count, now rather than
	// at the first rollout.
	if _, err := u.Bounds(1); err != nil {
		return RollingUpdate{}, fmt.Errorf("%s: %w", path, err)
	}
	return u, nil
}

// nestedIntOrString reads a number or a string at fields of obj; absent or
// null is nil.
func nestedIntOrString(obj map[string]any, fields ...string) (*intstr.IntOrString, error) {
	path := strings.Join(fields, ".")
	v, found, err := unstructured.NestedFieldNoCopy(obj, fields...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !found || v == nil {
		return nil, nil
	}
	var out intstr.IntOrString
	switch x := v.(type) {
	case string:
		out = intstr.FromString(x)
	case int64, int32, int, float64:
		// A negative number is refused by Bounds, with its own message.
		n, err := wholeInt32(x)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = intstr.FromInt32(n)
	default:
		return nil, fmt.Errorf("%s must be a number or a percentage string, not %T %v", path, v, v)
	}
	return &out, nil
}

// wholeInt32 converts a JSON number to int32: a fraction or a value
// outside the int32 range is an error.
func wholeInt32(v any) (int32, error) {
	var f float64
	switch x := v.(type) {
	case int64:
		f = float64(x)
	case int32:
		f = float64(x)
	case int:
		f = float64(x)
	case float64:
		f = x
	}
	if f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
		return 0, fmt.Errorf("must be a whole number in the int32 range, not %v", v)
	}
	return int32(f), nil
}
