package workerset_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/examples/workerset"
)

// TestScaleUpAndDown: 0 -> 3 creates three Workers from the template,
// controlled by the WorkerSet; 3 -> 1 deletes two in childset's default
// order: the not-ready Worker first although it is the oldest, then the
// younger of the two ready ones.
func TestScaleUpAndDown(t *testing.T) {
	h := start(t, []runtime.Object{newSet("web", int64(0))})
	time.Sleep(50 * time.Millisecond)
	assert.Empty(t, h.calls("create"), "nothing created for 0 replicas")

	h.scale(t, "web", 3)
	workers := h.waitWorkers(t, 3)
	for _, w := range workers {
		ref := metav1.GetControllerOf(&w)
		require.NotNil(t, ref, "Worker %s has no controller", w.GetName())
		assert.Equal(t, "WorkerSet", ref.Kind)
		assert.Equal(t, "examples.ctrlkit.io/v1alpha1", ref.APIVersion)
		assert.EqualValues(t, "web-uid", ref.UID)
		assert.Equal(t, "Worker", w.GetKind())
		assert.True(t, strings.HasPrefix(w.GetName(), "web-"), "name %s comes from generateName web-", w.GetName())
		assert.Equal(t, map[string]string{"app": "web"}, w.GetLabels())
		assert.Equal(t, map[string]any{"image": "worker:1", "cpus": int64(2)}, w.Object["spec"])
	}
	require.Len(t, h.calls("create"), 3)

	oldest, middle, youngest := workers[0].GetName(), workers[1].GetName(), workers[2].GetName()
	h.setReady(t, middle, true)
	h.setReady(t, youngest, true)
	h.scale(t, "web", 1)
	left := h.waitWorkers(t, 1)
	assert.Equal(t, middle, left[0].GetName(), "the oldest ready Worker stays")
	assert.ElementsMatch(t, []string{oldest, youngest}, h.calls("delete"), "not ready first, then the younger ready one")
	time.Sleep(100 * time.Millisecond)
	assert.Len(t, h.calls("create"), 3, "no create on the way down")
	assert.Len(t, h.calls("delete"), 2, "no further delete once settled")
	assert.Len(t, h.listWorkers(t), 1)
	ev := strings.Join(h.events(), "\n")
	assert.Equal(t, 3, strings.Count(ev, "Normal SuccessfulCreate Created Worker: "), ev)
	assert.Equal(t, 2, strings.Count(ev, "Normal SuccessfulDelete Deleted Worker: "), ev)
}

// TestAdoptsOrphan: a Worker with no controller whose labels the selector
// matches is adopted and counts toward the replicas; one whose labels it
// does not match is left alone.
func TestAdoptsOrphan(t *testing.T) {
	orphan := newWorker("orphan", map[string]string{"app": "db"})
	stranger := newWorker("stranger", map[string]string{"app": "other"})
	h := start(t, []runtime.Object{newSet("db", int64(2)), orphan, stranger})
	require.Eventually(t, func() bool {
		n := 0
		for _, w := range h.listWorkers(t) {
			if w.GetLabels()["app"] == "db" {
				n++
			}
		}
		return n == 2
	}, 10*time.Second, 5*time.Millisecond)

	got, err := h.workerAPI().Get(h.ctx, "orphan", metav1.GetOptions{})
	require.NoError(t, err)
	ref := metav1.GetControllerOf(got)
	require.NotNil(t, ref, "the orphan was not adopted")
	assert.EqualValues(t, "db-uid", ref.UID)
	assert.Equal(t, "WorkerSet", ref.Kind)
	assert.Len(t, h.calls("create"), 1, "one Worker created beside the adopted orphan")
	assert.Equal(t, []string{"patch"}, h.calls("patch"), "one adoption patch")

	other, err := h.workerAPI().Get(h.ctx, "stranger", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Nil(t, metav1.GetControllerOf(other), "a Worker the selector does not match is not adopted")
}

// TestDefaultReplicasIsOne: a WorkerSet without spec.replicas keeps one
// Worker, as a ReplicaSet does.
func TestDefaultReplicasIsOne(t *testing.T) {
	h := start(t, []runtime.Object{newSet("one", nil)})
	h.waitWorkers(t, 1)
	time.Sleep(100 * time.Millisecond)
	assert.Len(t, h.listWorkers(t), 1)
}

// TestMalformedReplicasIsAnEvent: a replica count the CRD's schema would
// refuse (an object that bypassed it) is a Warning event naming the field;
// nothing is created, adopted or deleted, and nothing panics.
func TestMalformedReplicasIsAnEvent(t *testing.T) {
	for _, tc := range []struct {
		name     string
		replicas any
		want     string
	}{
		{"text", "three", "spec.replicas must be an integer, not string three"},
		{"negative", int64(-2), "spec.replicas must be between 0 and 2147483647, not -2"},
		{"fraction", 1.5, "spec.replicas must be a whole number, not 1.5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orphan := newWorker("orphan", map[string]string{"app": "bad"})
			h := start(t, []runtime.Object{newSet("bad", tc.replicas), orphan})
			var events []string
			require.Eventually(t, func() bool {
				events = append(events, h.events()...)
				return len(events) > 0
			}, 10*time.Second, 5*time.Millisecond)
			assert.Equal(t, "Warning "+childset.ReasonTemplateInvalid+" cannot build a child: "+tc.want+
				"; nothing is created, deleted, adopted or released until the object changes", events[0])
			time.Sleep(100 * time.Millisecond)
			assert.Empty(t, h.calls("create"))
			assert.Empty(t, h.calls("patch"), "the orphan is not adopted")
			assert.Empty(t, h.calls("delete"))
		})
	}
}

// TestSelectorMismatchIsAnEvent: a template whose labels the selector does
// not match would create Workers the WorkerSet releases at once; childset
// refuses it before any write.
func TestSelectorMismatchIsAnEvent(t *testing.T) {
	set := newSet("mismatch", int64(2))
	require.NoError(t, unstructured.SetNestedStringMap(set.Object, map[string]string{"app": "elsewhere"},
		"spec", "template", "metadata", "labels"))
	h := start(t, []runtime.Object{set})
	require.Eventually(t, func() bool {
		for _, e := range h.events() {
			if strings.HasPrefix(e, "Warning "+childset.ReasonSelectorMismatch+" ") {
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	assert.Empty(t, h.calls("create"))
}

func TestNewControllerRefusesNils(t *testing.T) {
	dyn := newFakeClient()
	assert.PanicsWithValue(t, "workerset: NewController: nil client", func() {
		_, _ = workerset.NewController(t.Context(), nil, nil)
	})
	assert.PanicsWithValue(t, "workerset: NewController: nil informer factory", func() {
		_, _ = workerset.NewController(t.Context(), dyn, nil)
	})
}
