package gang_test

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
	"github.com/ctrlkit/ctrlkit/examples/gang"
)

const handOverLabel = "examples.ctrlkit.io/hand-over"

// gatedGang is newGang with spec.lifecycle.preDelete.
func gatedGang(name string, replicas, timeoutSeconds int64) *unstructured.Unstructured {
	g := newGang(name, replicas)
	_ = unstructured.SetNestedField(g.Object, map[string]any{"label": handOverLabel, "timeoutSeconds": timeoutSeconds},
		"spec", "lifecycle", "preDelete")
	return g
}

// Gangs.DeletionGate reads spec.lifecycle.preDelete; without it there is
// no gate.
func TestGangsDeletionGate(t *testing.T) {
	g := gang.Gangs{}
	assert.Equal(t, childset.DeletionGate{Label: handOverLabel, Timeout: 90 * time.Second}, g.DeletionGate(gatedGang("a", 1, 90)))
	assert.Zero(t, g.DeletionGate(newGang("a", int64(1))))
	var _ childset.DeletionGateSpec[*unstructured.Unstructured] = gang.RollingGangs{}
}

// marked names the API's pods the gate holds, sorted.
func (h *harness) marked(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, name := range h.podNames(t) {
		if h.pod(t, name).Labels[handOverLabel] == childset.DeletionGatePending {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// A scale-in of a Gang with spec.lifecycle.preDelete marks the highest
// indices and deletes none until released; releasing one, not the highest,
// deletes exactly that one.
func TestPreDeleteHoldsScaleIn(t *testing.T) {
	h := start(t, []runtime.Object{gatedGang("train", 3, 600)}, nil)
	h.waitPods(t, "train-0", "train-1", "train-2")
	h.scale(t, "train", 1)
	require.Eventually(t, func() bool { return slices.Equal(h.marked(t), []string{"train-1", "train-2"}) },
		10*time.Second, 5*time.Millisecond, "the two highest indices marked")
	time.Sleep(200 * time.Millisecond)
	assert.Empty(t, h.calls("delete"), "nothing deleted while the gate holds")

	for _, name := range []string{"train-1", "train-2"} {
		p := h.pod(t, name)
		delete(p.Labels, handOverLabel)
		// The fake clientset keeps resourceVersions as they are given, and
		// an update that keeps it reaches no handler.
		p.ResourceVersion = "100"
		_, err := h.client.CoreV1().Pods(ns).Update(h.ctx, p, metav1.UpdateOptions{})
		require.NoError(t, err)
		if name == "train-1" {
			h.waitPods(t, "train-0", "train-2")
			assert.Equal(t, []string{"train-1"}, h.calls("delete"), "only the released pod goes")
		}
	}
	h.waitPods(t, "train-0")
	assert.Equal(t, []string{"train-1", "train-2"}, h.calls("delete"))
	assert.NotContains(t, strings.Join(h.events(), "\n"), childset.ReasonDeletionGateTimeout)
}

// A gate nobody releases lets the deletion go once timeoutSeconds passed,
// with a Warning event.
func TestPreDeleteTimesOut(t *testing.T) {
	h := start(t, []runtime.Object{gatedGang("train", 2, 1)}, nil)
	h.waitPods(t, "train-0", "train-1")
	h.scale(t, "train", 1)
	h.waitEvent(t, "Warning "+childset.ReasonDeletionGateTimeout+" Deleting train-1")
	h.waitPods(t, "train-0")
	assert.Equal(t, []string{"train-1"}, h.calls("delete"))
}
