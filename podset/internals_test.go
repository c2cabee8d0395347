package podset

import (
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/expectations"
)

// firstTemplateHook runs a function at the first read of the template,
// which the core makes right after it reads the expectations gate and
// before it lists the pods.
type firstTemplateHook struct {
	Kind[*appsv1.ReplicaSet]
	once *sync.Once
	run  func()
}

func (h firstTemplateHook) Template(rs *appsv1.ReplicaSet) *v1.PodTemplateSpec {
	h.once.Do(h.run)
	return h.Kind.Template(rs)
}

// TestSyncExpectationsReadBeforePods: a pod that appears between the gate
// and the listing is counted, so no extra pod is created.
func TestSyncExpectationsReadBeforePods(t *testing.T) {
	rs := newRS("foobar", 2, fooBar)
	pods := newPods(2, "pod", rs, v1.PodPending, fooBar, true)
	var e *env
	e = newEnvWrapped(t, func(k Kind[*appsv1.ReplicaSet]) Kind[*appsv1.ReplicaSet] {
		return firstTemplateHook{Kind: k, once: &sync.Once{}, run: func() { e.addPods(pods[1]) }}
	}, []runtime.Object{rs}, WithBurstReplicas(2))
	e.addOwner(rs)
	e.addPods(pods[0])
	require.True(t, e.c.Expectations().SatisfiedExpectations(expectations.OwnerKeyFor(rs)))
	require.NoError(t, e.sync(rs))
	e.requireCounts(0, 0, 0)
}

// TestRelatedPodsLookup follows upstream's TestGetReplicaSetsWithSameController
// and TestRelatedPodsLookup: siblings are the owners with the same controller
// (pending deletion included), and their pods count once each.
func TestRelatedPodsLookup(t *testing.T) {
	someRS := newRS("foobar", 1, map[string]string{"app": "a"})
	relatedRS := newRS("related", 1, map[string]string{"app": "b"})
	pendingDeletion := newRS("deleting", 1, map[string]string{"app": "c"})
	pendingDeletion.SetDeletionTimestamp(ptr.To(metav1.Now()))
	unrelated := newRS("unrelated", 1, map[string]string{"app": "d"})
	unrelated.SetOwnerReferences([]metav1.OwnerReference{{UID: "456", Controller: ptr.To(true), Kind: "Deployment", Name: "e", APIVersion: "apps/v1"}})
	loner := newRS("loner", 1, map[string]string{"app": "e"})
	loner.SetOwnerReferences(nil)

	e := newEnv(t, nil)
	for _, rs := range []*appsv1.ReplicaSet{someRS, relatedRS, pendingDeletion, unrelated, loner} {
		e.addOwner(rs)
	}
	e.addPods(
		newPod("pod1", someRS, v1.PodRunning, map[string]string{"app": "a"}, true),
		newPod("pod2", someRS, v1.PodFailed, map[string]string{"app": "a"}, true),
		newPod("pod3", relatedRS, v1.PodRunning, map[string]string{"app": "b"}, true),
		newPod("pod4", pendingDeletion, v1.PodRunning, map[string]string{"app": "c"}, true),
		newPod("pod5", unrelated, v1.PodRunning, map[string]string{"app": "d"}, true),
		newPod("pod6", loner, v1.PodRunning, map[string]string{"app": "e"}, true),
	)
	related, err := e.podSpec().relatedPods(someRS)
	require.NoError(t, err)
	names := podNames(related)
	slices.Sort(names)
	assert.Equal(t, []string{"pod1", "pod2", "pod3", "pod4"}, names,
		"own pods (inactive too), siblings', pending deletion's; not the unrelated owner's")

	related, err = e.podSpec().relatedPods(loner)
	require.NoError(t, err)
	assert.Empty(t, related, "an owner without a controller has no siblings, so no related pods")
}

// TestPodControllerLookup follows upstream's test of the orphan lookup.
func TestPodControllerLookup(t *testing.T) {
	inNS := newRS("bar", 1, fooBar)
	inNS.SetNamespace("ns")
	noSelector := newRS("empty", 1, nil)
	noSelector.SetNamespace("ns")
	noSelector.Spec.Selector = &metav1.LabelSelector{}
	e := newEnv(t, nil)
	e.addOwner(inNS)
	e.addOwner(noSelector)
	cases := []struct {
		name      string
		namespace string
		labels    map[string]string
		want      []string
	}{
		{"pod without labels", "ns", nil, nil},
		{"namespace mismatch", "other", fooBar, nil},
		{"match; an empty selector matches nothing", "ns", fooBar, []string{"bar"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: tc.namespace, Labels: tc.labels}}
			var want []string
			for _, name := range tc.want {
				want = append(want, "ns/"+name)
			}
			assert.Equal(t, want, e.c.ObserveAdd(pod), "an orphan wakes the owners that may adopt it")
		})
	}
}
