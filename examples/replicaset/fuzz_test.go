package replicaset

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ctrlkit/ctrlkit/podranking"
)

// FuzzSyncWithArbitraryInput syncs owners whose selector, labels and
// deletion-cost annotations come from the fuzzer: whatever they hold, a sync
// returns (an error or not) and never panics.
func FuzzSyncWithArbitraryInput(f *testing.F) {
	f.Add("foo", "bar", "In", "-100", int32(1), int32(3))
	f.Add("", "", "", "", int32(0), int32(0))
	f.Add("a/b/c", "not valid!", "Bogus", "9999999999999", int32(-1), int32(2))
	f.Add("foo", "bar", "Exists", "1e3", int32(5), int32(1))
	f.Fuzz(func(t *testing.T, key, value, op, cost string, replicas, pods int32) {
		pods = max(0, min(pods, 5))
		replicas = max(-2, min(replicas, 5))
		sel := map[string]string{key: value}
		for _, k := range bothKinds {
			o := k.newOwner(replicas, sel)
			if rs, ok := o.(*appsv1.ReplicaSet); ok {
				rs.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{
					{Key: key, Operator: metav1.LabelSelectorOperator(op), Values: []string{value}},
				}
			}
			e := newEnvWithOwner(t, k, o)
			for _, p := range newPods(int(pods), "p", o, k, v1.PodRunning, sel, pods%2 == 0) {
				p.Annotations = map[string]string{podranking.DeletionCostAnnotation: cost}
				e.addPods(p)
			}
			_ = e.sync(o) // must not panic
		}
	})
}
