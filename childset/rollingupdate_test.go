package childset_test

import (
	"errors"
	"math"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ctrlkit/ctrlkit/childset"
)

func intBound(n int32) *intstr.IntOrString  { v := intstr.FromInt32(n); return &v }
func pctBound(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }

func TestRollingUpdateBounds(t *testing.T) {
	cases := []struct {
		name              string
		update            childset.RollingUpdate
		replicas          int32
		surge, unavailabl int32
	}{
		{"defaults round surge up and unavailable down", childset.RollingUpdate{}, 10, 3, 2},
		{"defaults of one replica", childset.RollingUpdate{}, 1, 1, 0},
		{"defaults of zero replicas", childset.RollingUpdate{}, 0, 0, 0},
		{"negative replicas count as zero", childset.RollingUpdate{}, -3, 0, 0},
		{"numbers", childset.RollingUpdate{MaxSurge: intBound(2), MaxUnavailable: intBound(0)}, 5, 2, 0},
		{"unavailable is at most replicas", childset.RollingUpdate{MaxSurge: intBound(0), MaxUnavailable: intBound(7)}, 5, 0, 5},
		{"surge kept with zero replicas", childset.RollingUpdate{MaxSurge: intBound(4), MaxUnavailable: intBound(1)}, 0, 4, 0},
		{"both resolving to zero make unavailable 1", childset.RollingUpdate{MaxSurge: pctBound("0%"), MaxUnavailable: pctBound("10%")}, 3, 0, 1},
		{"surge above 100%", childset.RollingUpdate{MaxSurge: pctBound("200%"), MaxUnavailable: intBound(0)}, 3, 6, 0},
		{"unavailable at 100%", childset.RollingUpdate{MaxSurge: intBound(0), MaxUnavailable: pctBound("100%")}, 7, 0, 7},
		{"leading zeros", childset.RollingUpdate{MaxSurge: pctBound("025%"), MaxUnavailable: pctBound("0050%")}, 4, 1, 2},
		{"odd replicas", childset.RollingUpdate{MaxSurge: pctBound("33%"), MaxUnavailable: pctBound("33%")}, 7, 3, 2},
		{"huge surge still in range", childset.RollingUpdate{MaxSurge: pctBound("99999999999%")}, 1, 1000000000, 0},
		{"surge of MaxInt32 children", childset.RollingUpdate{MaxSurge: pctBound("100%")}, math.MaxInt32, math.MaxInt32, math.MaxInt32 / 4},
		{"partition is not a bound", childset.RollingUpdate{Partition: 40}, 4, 1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.update.Bounds(tc.replicas)
			if err != nil {
				t.Fatalf("Bounds(%d): %v", tc.replicas, err)
			}
			want := childset.RolloutBounds{MaxSurge: tc.surge, MaxUnavailable: tc.unavailabl}
			if got != want {
				t.Errorf("Bounds(%d) = %+v, want %+v", tc.replicas, got, want)
			}
		})
	}
}

func TestRollingUpdateBoundsRefusesBadData(t *testing.T) {
	cases := []struct {
		name   string
		update childset.RollingUpdate
	}{
		{"negative surge", childset.RollingUpdate{MaxSurge: intBound(-1)}},
		{"negative unavailable", childset.RollingUpdate{MaxUnavailable: intBound(-1)}},
		{"negative percent", childset.RollingUpdate{MaxSurge: pctBound("-5%")}},
		{"plus sign", childset.RollingUpdate{MaxSurge: pctBound("+5%")}},
		{"no percent sign", childset.RollingUpdate{MaxUnavailable: pctBound("5")}},
		{"percent sign alone", childset.RollingUpdate{MaxUnavailable: pctBound("%")}},
		{"empty string", childset.RollingUpdate{MaxSurge: pctBound("")}},
		{"fraction", childset.RollingUpdate{MaxSurge: pctBound("5.5%")}},
		{"space", childset.RollingUpdate{MaxSurge: pctBound(" 5%")}},
		{"two percent signs", childset.RollingUpdate{MaxSurge: pctBound("5%%")}},
		{"trailing newline", childset.RollingUpdate{MaxSurge: pctBound("5%\n")}},
		{"unavailable above 100%", childset.RollingUpdate{MaxUnavailable: pctBound("101%")}},
		{"unavailable beyond int64", childset.RollingUpdate{MaxUnavailable: pctBound("99999999999999999999%")}},
		{"surge beyond int64", childset.RollingUpdate{MaxSurge: pctBound("99999999999999999999%")}},
		{"surge beyond int32", childset.RollingUpdate{MaxSurge: pctBound("99999999999%")}},
		{"both zero", childset.RollingUpdate{MaxSurge: intBound(0), MaxUnavailable: intBound(0)}},
		{"both zero percent", childset.RollingUpdate{MaxSurge: pctBound("0%"), MaxUnavailable: pctBound("00%")}},
		{"unknown type", childset.RollingUpdate{MaxSurge: &intstr.IntOrString{Type: 7}}},
		{"negative partition", childset.RollingUpdate{Partition: -1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.update.Bounds(100)
			if !errors.Is(err, childset.ErrInvalidRollingUpdate) {
				t.Fatalf("Bounds = %+v, %v; want an error wrapping ErrInvalidRollingUpdate", got, err)
			}
			t.Log(err)
		})
	}
}
