package workerset_test

import (
	"slices"
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

const drainLabel = "examples.ctrlkit.io/drain"

// gatedSet is newSet with spec.lifecycle.preDelete.
func gatedSet(name string, replicas, timeoutSeconds int64) *unstructured.Unstructured {
	set := newSet(name, replicas)
	_ = unstructured.SetNestedField(set.Object, map[string]any{"label": drainLabel, "timeoutSeconds": timeoutSeconds},
		"spec", "lifecycle", "preDelete")
	return set
}

// Set.DeletionGate reads spec.lifecycle.preDelete; without it, or without
// a label, there is no gate.
func TestSetDeletionGate(t *testing.T) {
	s := workerset.Set{}
	assert.Equal(t, childset.DeletionGate{Label: drainLabel, Timeout: 90 * time.Second}, s.DeletionGate(gatedSet("a", 1, 90)))
	assert.Zero(t, s.DeletionGate(newSet("a", int64(1))))
	noTimeout := newSet("a", int64(1))
	_ = unstructured.SetNestedField(noTimeout.Object, drainLabel, "spec", "lifecycle", "preDelete", "label")
	assert.Equal(t, childset.DeletionGate{Label: drainLabel}, s.DeletionGate(noTimeout), "childset's default timeout")
	var _ childset.DeletionGateSpec[*unstructured.Unstructured] = workerset.RollingSet{}
}

// marked names the API's Workers the gate holds.
func (h *harness) marked(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, w := range h.listWorkers(t) {
		if w.GetLabels()[drainLabel] == childset.DeletionGatePending {
			out = append(out, w.GetName())
		}
	}
	return out
}

// A scale-in of a WorkerSet with spec.lifecycle.preDelete marks its victim
// and deletes nothing until the label is cleared; then exactly that Worker
// goes.
func TestPreDeleteHoldsScaleIn(t *testing.T) {
	h := start(t, []runtime.Object{gatedSet("web", 3, 600)})
	for _, w := range h.waitWorkers(t, 3) {
		h.setReady(t, w.GetName(), true)
	}
	h.scale(t, "web", 2)
	require.Eventually(t, func() bool { return len(h.marked(t)) == 1 }, 10*time.Second, 5*time.Millisecond, "one victim marked")
	time.Sleep(200 * time.Millisecond)
	assert.Empty(t, h.calls("delete"), "nothing deleted while the gate holds")
	assert.Len(t, h.marked(t), 1, "no more victims marked")
	victim := h.marked(t)[0]

	w, err := h.workerAPI().Get(h.ctx, victim, metav1.GetOptions{})
	require.NoError(t, err)
	labels := w.GetLabels()
	delete(labels, drainLabel)
	w.SetLabels(labels)
	// The fake client keeps resourceVersions as they are given, and an
	// update that keeps it reaches no handler.
	w.SetResourceVersion("100")
	_, err = h.workerAPI().Update(h.ctx, w, metav1.UpdateOptions{})
	require.NoError(t, err)
	left := h.waitWorkers(t, 2)
	assert.Equal(t, []string{victim}, h.calls("delete"))
	assert.False(t, slices.ContainsFunc(left, func(w unstructured.Unstructured) bool { return w.GetName() == victim }))
	assert.NotContains(t, strings.Join(h.events(), "\n"), childset.ReasonDeletionGateTimeout)
}

// A gate nobody releases lets the deletion go once
// spec.lifecycle.preDelete.timeoutSeconds passed, with a Warning event.
func TestPreDeleteTimesOut(t *testing.T) {
	h := start(t, []runtime.Object{gatedSet("web", 2, 1)})
	for _, w := range h.waitWorkers(t, 2) {
		h.setReady(t, w.GetName(), true)
	}
	h.scale(t, "web", 1)
	require.Eventually(t, func() bool { return len(h.marked(t)) == 1 }, 10*time.Second, 5*time.Millisecond, "one victim marked")
	victim := h.marked(t)[0]
	h.waitWorkers(t, 1)
	assert.Equal(t, []string{victim}, h.calls("delete"))
	assert.Contains(t, strings.Join(h.events(), "\n"), "Warning "+childset.ReasonDeletionGateTimeout+" Deleting "+victim)
}
