package replicaset

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func podNames(pods []*v1.Pod) []string {
	names := make([]string, 0, len(pods))
	for _, p := range pods {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names
}

// TestRelatedPodsLookup follows upstream's TestGetReplicaSetsWithSameController
// and TestRelatedPodsLookup: siblings are the owners with the same controller
// (pending deletion included), and their pods count once each.
func TestRelatedPodsLookup(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		someRS := k.newOwner(1, map[string]string{"app": "a"})
		relatedRS := k.newOwner(1, map[string]string{"app": "b"})
		relatedRS.SetName("related")
		pendingDeletion := k.newOwner(1, map[string]string{"app": "c"})
		pendingDeletion.SetName("deleting")
		pendingDeletion.SetDeletionTimestamp(ptr.To(metav1.Now()))
		unrelated := k.newOwner(1, map[string]string{"app": "d"})
		unrelated.SetName("unrelated")
		unrelated.SetOwnerReferences([]metav1.OwnerReference{{UID: "456", Controller: ptr.To(true), Kind: "Deployment", Name: "e", APIVersion: "apps/v1"}})
		loner := k.newOwner(1, map[string]string{"app": "e"})
		loner.SetName("loner")
		loner.SetOwnerReferences(nil)

		e := newEnv(t, k, nil)
		for _, o := range []metav1.Object{someRS, relatedRS, pendingDeletion, unrelated, loner} {
			e.addOwner(o)
		}
		e.addPods(
			newPod("pod1", someRS, k, v1.PodRunning, map[string]string{"app": "a"}, true),
			newPod("pod2", someRS, k, v1.PodFailed, map[string]string{"app": "a"}, true),
			newPod("pod3", relatedRS, k, v1.PodRunning, map[string]string{"app": "b"}, true),
			newPod("pod4", pendingDeletion, k, v1.PodRunning, map[string]string{"app": "c"}, true),
			newPod("pod5", unrelated, k, v1.PodRunning, map[string]string{"app": "d"}, true),
		)
		wrap := func(o metav1.Object) owner {
			w, ok := e.c.kind.fromObject(o)
			require.True(t, ok)
			return w
		}
		related, err := e.c.relatedPods(wrap(someRS))
		require.NoError(t, err)
		assert.Equal(t, []string{"pod1", "pod2", "pod3", "pod4"}, podNames(related),
			"own pods (inactive too), siblings', pending deletion's; not the unrelated owner's")

		_, err = e.c.relatedPods(wrap(loner))
		require.Error(t, err, "an owner without a controller has no siblings")
	})
}

// TestPodControllerLookup follows upstream's test of the orphan lookup.
func TestPodControllerLookup(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		inNS := k.newOwner(1, fooBar)
		inNS.SetNamespace("ns")
		inNS.SetName("bar")
		e := newEnv(t, k, nil)
		e.addOwner(inNS)
		cases := []struct {
			name      string
			namespace string
			labels    map[string]string
			want      []string
		}{
			{"pod without labels", "ns", nil, nil},
			{"namespace mismatch", "other", fooBar, nil},
			{"match", "ns", fooBar, []string{"bar"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: tc.namespace, Labels: tc.labels}}
				var got []string
				for _, o := range e.c.ownersSelecting(pod) {
					got = append(got, o.GetName())
				}
				assert.Equal(t, tc.want, got)
			})
		}
	})
}
