package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/examples/workerset"
)

// TestWorkerSetInPlaceRollout runs ctrlruntime/examples/workerset with
// spec.strategy {type: InPlaceIfPossible, rollingUpdate: {maxUnavailable:
// 2, maxSurge: 0}} over 10 Workers, the test acting as the Workers' agents
// (each reports, a little after a change, that it runs its spec.image).
// The template's image changes: every Worker is patched in place, so the
// Workers keep their UIDs and none is created or deleted; each ends at the
// new image and the update revision; and a watch of the Workers, replayed
// in resourceVersion order, never shows more than 10 Workers nor fewer
// than 8 available (ready and running spec.image), the agents' delay being
// what makes an in-place update count against maxUnavailable.
func TestWorkerSetInPlaceRollout(t *testing.T) {
	const replicas, maxUnavailable = 10, 2
	ctx, cfg, dyn, ns := childsetScenario(t, "workerset-inplace-", workerset.CRD)
	workers := dyn.Resource(workersResource).Namespace(ns)
	sets := dyn.Resource(workerSetsResource).Namespace(ns)

	sampler := &rolloutSampler{maxTotal: replicas, minReady: replicas - maxUnavailable, ready: workerAvailable}
	startRolloutSampler(t, dyn, ns, workersResource, sampler)
	startImageAgents(t, ctx, workers, 300*time.Millisecond)
	defer startWorkerSetManager(t, cfg)()

	set := createPool(t, ctx, sets, replicas, map[string]any{
		"strategy": map[string]any{
			"type":          "InPlaceIfPossible",
			"rollingUpdate": map[string]any{"maxSurge": int64(0), "maxUnavailable": int64(maxUnavailable)},
		},
	})
	first := waitRolledOut(t, ctx, sets, workers, set.GetUID(), "worker:1", replicas)
	before := workerUIDs(t, ctx, workers, set.GetUID())
	require.Len(t, before, replicas)

	start := time.Now()
	rv := setImage(t, ctx, sets, "worker:2")
	second := waitRolledOut(t, ctx, sets, workers, set.GetUID(), "worker:2", replicas)
	require.NotEqual(t, first, second, "a new revision")
	// waitRolledOut saw every Worker at spec.image worker:2 and the update
	// revision; the agents then report it running before the set is done.
	require.NoError(t, waitFor(time.Minute, func() (bool, error) {
		live, err := controlledLive(ctx, workers, set.GetUID())
		if err != nil {
			return false, err
		}
		for i := range live {
			if !workerAvailable(&live[i]) {
				return false, nil
			}
		}
		return len(live) == replicas, nil
	}), "every Worker available at worker:2")

	rep := sampler.replay(rv, set.GetUID())
	t.Logf("rolled in place to worker:2 in %s: %d events checked, max Workers %d (bound %d), min available %d (bound %d), Workers created %d",
		time.Since(start).Round(time.Millisecond), rep.Samples, rep.MaxTotal, replicas, rep.MinReady, replicas-maxUnavailable, rep.Created)
	require.Empty(t, rep.Violations)
	require.Zero(t, rep.Created, "no Worker created")
	require.Equal(t, before, workerUIDs(t, ctx, workers, set.GetUID()), "the same Workers, none deleted or replaced")
	// Each Worker was patched and its agent answered: a rollout the
	// sampler saw nothing of would prove nothing.
	require.GreaterOrEqual(t, rep.Samples, 2*replicas, "every Worker's update and its agent's report were seen")
}

// workerAvailable is a Worker ready and running its spec.image, as its
// agent reports in status.image.
func workerAvailable(u *unstructured.Unstructured) bool {
	ready, _, _ := unstructured.NestedBool(u.Object, "status", "ready")
	want, _, _ := unstructured.NestedString(u.Object, "spec", "image")
	runs, _, _ := unstructured.NestedString(u.Object, "status", "image")
	return ready && runs == want && u.GetDeletionTimestamp() == nil
}

// workerUIDs is the UIDs of the Workers owner controls, by name.
func workerUIDs(t *testing.T, ctx context.Context, workers dynamic.ResourceInterface, owner types.UID) map[string]types.UID {
	t.Helper()
	live, err := controlledLive(ctx, workers, owner)
	require.NoError(t, err)
	out := map[string]types.UID{}
	for _, w := range live {
		out[w.GetName()] = w.GetUID()
	}
	return out
}

// startImageAgents acts as the Workers' agents until the test ends: delay
// after a Worker first shows a spec.image its status does not report (or
// after it appears), its agent reports it ready and running that image.
// The delay is what keeps an in-place update unavailable for a while, as a
// real agent pulling and restarting would.
func startImageAgents(t *testing.T, ctx context.Context, workers dynamic.ResourceInterface, delay time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	type change struct {
		image string
		seen  time.Time
	}
	pending := map[types.UID]change{}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			list, err := workers.List(ctx, metav1.ListOptions{})
			if err == nil {
				for i := range list.Items {
					w := &list.Items[i]
					if workerAvailable(w) || w.GetDeletionTimestamp() != nil {
						delete(pending, w.GetUID())
						continue
					}
					image, _, _ := unstructured.NestedString(w.Object, "spec", "image")
					p, ok := pending[w.GetUID()]
					if !ok || p.image != image {
						// A change the agent has just learnt of: it runs
						// the image only after delay.
						pending[w.GetUID()] = change{image: image, seen: time.Now()}
						continue
					}
					if time.Since(p.seen) < delay {
						continue
					}
					_ = unstructured.SetNestedField(w.Object, true, "status", "ready")
					_ = unstructured.SetNestedField(w.Object, time.Now().UTC().Format(time.RFC3339), "status", "readySince")
					_ = unstructured.SetNestedField(w.Object, image, "status", "image")
					// A conflict is a newer Worker: the next pass sees it.
					_, _ = workers.UpdateStatus(ctx, w, metav1.UpdateOptions{})
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}
