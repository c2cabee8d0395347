package gang_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/examples/gang"
)

// TestScaleByIndex: 0 -> 3 creates train-0, train-1, train-2 (lowest
// missing index first); 3 -> 1 deletes train-2, then train-1 (highest
// first). A burst of one makes each sync write one pod, so the order of
// the calls is the order of the decisions.
func TestScaleByIndex(t *testing.T) {
	h := start(t, []runtime.Object{newGang("train", int64(0))}, nil,
		gang.WithSetOptions(childset.WithBurstReplicas(1)))
	time.Sleep(50 * time.Millisecond)
	assert.Empty(t, h.calls("create"), "nothing created for 0 replicas")

	h.scale(t, "train", 3)
	h.waitPods(t, "train-0", "train-1", "train-2")
	assert.Equal(t, []string{"train-0", "train-1", "train-2"}, h.calls("create"))
	for i, name := range []string{"train-0", "train-1", "train-2"} {
		p := h.pod(t, name)
		ref := metav1.GetControllerOf(p)
		require.NotNil(t, ref, "pod %s has no controller", name)
		assert.Equal(t, "Gang", ref.Kind)
		assert.Equal(t, "examples.ctrlkit.io/v1alpha1", ref.APIVersion)
		assert.EqualValues(t, "train-uid", ref.UID)
		assert.Equal(t, map[string]string{"role": "rank", gang.Label: "train", childset.IndexLabel: strconv.Itoa(i)}, p.Labels)
		require.Len(t, p.Spec.Containers, 1)
		assert.Equal(t, "trainer:1", p.Spec.Containers[0].Image)
	}

	h.scale(t, "train", 1)
	h.waitPods(t, "train-0")
	assert.Equal(t, []string{"train-2", "train-1"}, h.calls("delete"), "highest index first")
	time.Sleep(100 * time.Millisecond)
	assert.Len(t, h.calls("create"), 3, "no create on the way down")
	assert.Equal(t, []string{"train-0"}, h.podNames(t))

	// Back up to 2: the lowest missing index, train-1, comes back.
	h.scale(t, "train", 2)
	h.waitPods(t, "train-0", "train-1")
	assert.Equal(t, []string{"train-0", "train-1", "train-2", "train-1"}, h.calls("create"))
}

// TestForeignPodHoldingAName: a pod the Gang does not control holds
// train-1. The Gang gets a NameConflict event and never creates a second
// pod of that name; the other indices are created. The holder is left
// alone.
func TestForeignPodHoldingAName(t *testing.T) {
	for _, tc := range []struct {
		name   string
		holder *v1.Pod
		want   string
	}{
		{
			name:   "orphan the selector does not match",
			holder: foreignPod("train-1", map[string]string{"app": "other"}, nil),
			want:   `Warning NameConflict child "train-1" is held by an object this Gang does not control; not creating it until the name is free`,
		},
		{
			name: "controlled by another owner",
			holder: foreignPod("train-1", map[string]string{gang.Label: "train"}, &metav1.OwnerReference{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "rs-uid", Controller: ptr.To(true)}),
			want: `Warning NameConflict child "train-1" is controlled by ReplicaSet rs, not by this Gang; not creating it until the name is free`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, []runtime.Object{newGang("train", int64(3))}, []runtime.Object{tc.holder})
			h.waitPods(t, "train-0", "train-1", "train-2")
			assert.Equal(t, tc.want, h.waitEvent(t, "Warning NameConflict"))
			time.Sleep(100 * time.Millisecond)
			assert.ElementsMatch(t, []string{"train-0", "train-2"}, h.calls("create"), "no create of the held name")
			assert.Empty(t, h.calls("patch"), "the holder is not adopted")
			assert.Empty(t, h.calls("delete"), "nor deleted")
			got := h.pod(t, "train-1")
			assert.Equal(t, tc.holder.Labels, got.Labels)
			assert.Equal(t, tc.holder.OwnerReferences, got.OwnerReferences)
			assert.Equal(t, []string{"train-0", "train-1", "train-2"}, h.podNames(t))
		})
	}
}

// TestAdoptsOrphanHoldingAName: an orphan pod carrying the Gang's label and
// a wanted name is adopted, not replaced.
func TestAdoptsOrphanHoldingAName(t *testing.T) {
	orphan := foreignPod("train-1", map[string]string{gang.Label: "train"}, nil)
	h := start(t, []runtime.Object{newGang("train", int64(3))}, []runtime.Object{orphan})
	h.waitPods(t, "train-0", "train-1", "train-2")
	require.Eventually(t, func() bool { return metav1.GetControllerOf(h.pod(t, "train-1")) != nil }, 10*time.Second, 5*time.Millisecond)
	assert.EqualValues(t, "train-uid", metav1.GetControllerOf(h.pod(t, "train-1")).UID)
	assert.ElementsMatch(t, []string{"train-0", "train-2"}, h.calls("create"))
	assert.Equal(t, []string{"train-1"}, h.calls("patch"))
	for _, e := range h.events() {
		assert.False(t, strings.HasPrefix(e, "Warning"), "no warning: %s", e)
	}
}

// TestMalformedGangIsAnEvent: a spec the CRD's schema would refuse (an
// object that bypassed it) is a Warning event naming the field; nothing is
// written and nothing panics.
func TestMalformedGangIsAnEvent(t *testing.T) {
	noTemplate := newGang("bad", int64(2))
	delete(noTemplate.Object["spec"].(map[string]any), "template")
	badTemplate := newGang("bad", int64(2))
	badTemplate.Object["spec"].(map[string]any)["template"] = map[string]any{"spec": map[string]any{"containers": "none"}}
	for _, tc := range []struct {
		name string
		gang runtime.Object
		want string
	}{
		{"negative replicas", newGang("bad", int64(-1)), "spec.replicas must be between 0 and 2147483647, not -1"},
		{"text replicas", newGang("bad", "2"), "spec.replicas must be an integer, not string 2"},
		{"no template", noTemplate, "spec.template is missing"},
		{"malformed template", badTemplate, "spec.template: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orphan := foreignPod("bad-0", map[string]string{gang.Label: "bad"}, nil)
			h := start(t, []runtime.Object{tc.gang}, []runtime.Object{orphan})
			e := h.waitEvent(t, "Warning "+childset.ReasonTemplateInvalid)
			assert.Contains(t, e, "cannot build a child: "+tc.want)
			time.Sleep(100 * time.Millisecond)
			assert.Empty(t, h.calls("create"))
			assert.Empty(t, h.calls("patch"), "the orphan is not adopted")
			assert.Empty(t, h.calls("delete"))
		})
	}
}

func TestNewControllerRefusesNils(t *testing.T) {
	assert.PanicsWithValue(t, "gang: NewController: nil client", func() {
		_, _ = gang.NewController(t.Context(), nil, nil, nil)
	})
}
