package parity

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ctrlkit/ctrlkit/podranking"
	"k8s.io/kubernetes/pkg/apis/core/helper"
)

// TestParityDeletionCost compares podranking.DeletionCost with
// pkg/apis/core/helper.GetDeletionCostFromPodAnnotations: the value, and
// whether an error is reported.
func TestParityDeletionCost(t *testing.T) {
	target[map[string]string]{
		name: "DeletionCost",
		gen: func(r *rand.Rand) map[string]string {
			switch r.IntN(10) {
			case 0:
				return nil
			case 1:
				return map[string]string{"other": "5"}
			default:
				return map[string]string{costKey: costString(r)}
			}
		},
		check: func(a map[string]string) string {
			got, gotErr := podranking.DeletionCost(a)
			want, wantErr := helper.GetDeletionCostFromPodAnnotations(a)
			if got != want || (gotErr == nil) != (wantErr == nil) {
				return fmt.Sprintf("DeletionCost = (%d, %v), upstream = (%d, %v)", got, gotErr, want, wantErr)
			}
			return ""
		},
		describe: func(a map[string]string) string { return fmt.Sprintf("annotations: %#v", a) },
	}.run(t)
}

// FuzzParityDeletionCost lets the fuzzer look for annotation values on which
// ctrlkit and upstream disagree.
func FuzzParityDeletionCost(f *testing.F) {
	for _, v := range costValues {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		a := map[string]string{costKey: v}
		got, gotErr := podranking.DeletionCost(a)
		want, wantErr := helper.GetDeletionCostFromPodAnnotations(a)
		if got != want || (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("value %q: DeletionCost = (%d, %v), upstream = (%d, %v)", v, got, gotErr, want, wantErr)
		}
	})
}
