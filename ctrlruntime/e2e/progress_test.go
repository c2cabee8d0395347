package e2e

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/examples/workerset"
	"github.com/ctrlkit/ctrlkit/status"
)

// TestWorkerSetPauseAndProgressDeadline runs ctrlruntime/examples/workerset
// with spec.progressDeadlineSeconds 3 against the real kube-apiserver, the
// test acting as the agents of every Worker but those of image
// "worker:broken", which never become ready. A paused WorkerSet keeps its
// Workers at the old template and says it is paused; resumed onto the
// broken image it surges one Worker, which never comes up, and 3 seconds
// later its Progressing condition says ProgressDeadlineExceeded, with no
// event but the core's own recheck to wake it; a good image then rolls
// out and the condition says the rollout is complete. The WorkerSet never
// holds more than replicas+maxSurge Workers.
func TestWorkerSetPauseAndProgressDeadline(t *testing.T) {
	const replicas = 3
	ctx, cfg, dyn, ns := childsetScenario(t, "workerset-progress-", workerset.CRD)
	workers := dyn.Resource(workersResource).Namespace(ns)
	sets := dyn.Resource(workerSetsResource).Namespace(ns)
	startAgentsWhere(t, ctx, workers, func(w *unstructured.Unstructured) bool {
		img, _, _ := unstructured.NestedString(w.Object, "spec", "image")
		return img != "worker:broken"
	})
	defer startWorkerSetManager(t, cfg)()

	set := createPool(t, ctx, sets, replicas, map[string]any{
		"strategy":                map[string]any{"rollingUpdate": map[string]any{"maxSurge": int64(1), "maxUnavailable": int64(0)}},
		"progressDeadlineSeconds": int64(3),
	})
	waitRolledOut(t, ctx, sets, workers, set.GetUID(), "worker:1", replicas)
	waitProgressing(t, ctx, sets, "True", status.ReasonNewRevisionAvailable)

	// Paused onto a new image: nothing is replaced.
	editSet(t, ctx, sets, func(obj map[string]any) error {
		if err := unstructured.SetNestedField(obj, true, "spec", "paused"); err != nil {
			return err
		}
		return unstructured.SetNestedField(obj, "worker:broken", "spec", "template", "spec", "image")
	})
	waitProgressing(t, ctx, sets, "Unknown", status.ReasonPaused)
	time.Sleep(time.Second)
	live, err := controlledLive(ctx, workers, set.GetUID())
	require.NoError(t, err)
	require.Len(t, live, replicas)
	for _, w := range live {
		img, _, _ := unstructured.NestedString(w.Object, "spec", "image")
		require.Equal(t, "worker:1", img, "%s was replaced while paused", w.GetName())
	}

	// Resumed onto the broken image: stuck after the deadline.
	resumed := time.Now()
	editSet(t, ctx, sets, func(obj map[string]any) error {
		return unstructured.SetNestedField(obj, false, "spec", "paused")
	})
	waitProgressing(t, ctx, sets, "False", status.ReasonProgressDeadlineExceeded)
	t.Logf("resumed onto a broken image: ProgressDeadlineExceeded %s later (deadline 3s)", time.Since(resumed).Round(time.Millisecond))
	live, err = controlledLive(ctx, workers, set.GetUID())
	require.NoError(t, err)
	require.LessOrEqual(t, len(live), replicas+1, "maxSurge 1")

	// A good image rolls out and completes.
	setImage(t, ctx, sets, "worker:2")
	waitRolledOut(t, ctx, sets, workers, set.GetUID(), "worker:2", replicas)
	waitProgressing(t, ctx, sets, "True", status.ReasonNewRevisionAvailable)
}

// editSet applies edit to the WorkerSet "pool", retrying on conflicts, and
// returns the resourceVersion of the change.
func editSet(t *testing.T, ctx context.Context, sets dynamic.ResourceInterface, edit func(map[string]any) error) int64 {
	t.Helper()
	var rv int64
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := sets.Get(ctx, "pool", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := edit(cur.Object); err != nil {
			return err
		}
		updated, err := sets.Update(ctx, cur, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		rv, err = strconv.ParseInt(updated.GetResourceVersion(), 10, 64)
		return err
	}))
	return rv
}

// waitProgressing waits until the WorkerSet "pool" has a Progressing
// condition of that status and reason.
func waitProgressing(t *testing.T, ctx context.Context, sets dynamic.ResourceInterface, wantStatus, wantReason string) {
	t.Helper()
	require.NoError(t, waitFor(time.Minute, func() (bool, error) {
		cur, err := sets.Get(ctx, "pool", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(cur.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Progressing" {
				return m["status"] == wantStatus && m["reason"] == wantReason, fmt.Errorf("Progressing is %v/%v", m["status"], m["reason"])
			}
		}
		return false, fmt.Errorf("no Progressing condition in %v", conds)
	}), "the WorkerSet never reported Progressing %s/%s", wantStatus, wantReason)
}
