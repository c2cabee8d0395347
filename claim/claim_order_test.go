package claim

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestClaimMatchesClaimObject checks the batched claim loop against
// ClaimObject applied to each pod in turn, on inputs small enough for the
// on-stack bitmap and large enough to need a heap one, with a mix of our
// pods (matching and not), other controllers' pods, orphans (matching, not,
// being deleted) and nil entries at word boundaries.
func TestClaimMatchesClaimObject(t *testing.T) {
	ctx := context.Background()
	c := controller("default", "123", false)
	other := controller("default", "456", false)
	kindOf := func(i int) *v1.Pod {
		name := fmt.Sprintf("p%d", i)
		switch i % 7 {
		case 0:
			return newPod(name, productionLabel, c)
		case 1:
			return newPod(name, testingLabel, c) // released
		case 2:
			return newPod(name, productionLabel, other)
		case 3:
			return newPod(name, productionLabel, nil) // adopted
		case 4:
			return newPod(name, testingLabel, nil)
		case 5:
			return deleting(newPod(name, productionLabel, nil))
		default:
			if i%64 == 63 {
				return nil
			}
			return newPod(name, productionLabel, c)
		}
	}
	for _, n := range []int{0, 1, 63, 64, 65, 2048, 2049, 5000} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			pods := make([]*v1.Pod, n)
			for i := range pods {
				pods[i] = kindOf(i)
			}

			// The reference: one ClaimObject per pod, with a manager of its own.
			refPC := &fakePodPatcher{}
			ref := NewPodControllerRefManager(refPC, c, productionSelector, fakeKind, nil)
			var want []string
			wantErrs := 0
			for _, pod := range pods {
				if pod == nil {
					wantErrs++
					continue
				}
				owned, err := ref.ClaimObject(ctx, pod,
					func(o metav1.Object) bool { return productionSelector.Matches(labels.Set(o.GetLabels())) },
					func(ctx context.Context, o metav1.Object) error { return ref.AdoptPod(ctx, o.(*v1.Pod)) },
					func(ctx context.Context, o metav1.Object) error { return ref.ReleasePod(ctx, o.(*v1.Pod)) })
				require.NoError(t, err)
				if owned {
					want = append(want, pod.Name)
				}
			}

			fpc := &fakePodPatcher{}
			m := NewPodControllerRefManager(fpc, c, productionSelector, fakeKind, nil)
			claimed, err := m.ClaimPods(ctx, pods)
			if wantErrs == 0 {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrNilObject)
			}
			assert.Equal(t, want, podNames(claimed), "same pods, in input order")
			assert.Equal(t, refPC.PatchedPods, fpc.PatchedPods, "same adoptions and releases")
			if len(want) == 0 {
				assert.Nil(t, claimed, "nothing claimed gives nil")
			} else {
				assert.Equal(t, len(claimed), cap(claimed), "result allocated at its exact size")
			}
		})
	}
}
