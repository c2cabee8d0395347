package nilcheck

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestIsNil(t *testing.T) {
	var typedNil runtime.Object = (*appsv1.ReplicaSet)(nil)
	var nilMap map[string]int
	for _, tc := range []struct {
		name string
		v    any
		want bool
	}{
		{"nil interface", nil, true},
		{"typed nil pointer", typedNil, true},
		{"nil map", nilMap, true},
		{"pointer", &appsv1.ReplicaSet{}, false},
		{"value", 3, false},
		{"empty struct value", appsv1.ReplicaSet{}, false},
	} {
		if got := IsNil(tc.v); got != tc.want {
			t.Errorf("%s: IsNil = %v, want %v", tc.name, got, tc.want)
		}
	}
	rs := &appsv1.ReplicaSet{}
	if n := testing.AllocsPerRun(100, func() { _ = IsNil(rs) }); n != 0 {
		t.Errorf("IsNil allocates %v times", n)
	}
}
