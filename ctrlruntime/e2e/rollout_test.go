package e2e

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/examples/workerset"
	"github.com/ctrlkit/ctrlkit/history"
)

// TestWorkerSetRollingUpdate runs ctrlruntime/examples/workerset with
// spec.strategy.rollingUpdate {maxSurge: 25%, maxUnavailable: 0} over 50
// Workers, the test acting as the Workers' agents (it marks each new Worker
// ready). After the set settles at 50 ready Workers, the template's image
// changes; a watch of the Workers, replayed in resourceVersion order, shows
// at every event from that change on at most 50+13 Workers (those being
// deleted included) and at least 50 ready ones, and the rollout ends with
// every Worker at the update revision and the status saying so. The image
// is then rolled back: the first revision is reused (two
// ControllerRevisions in all) and the same bounds hold.
func TestWorkerSetRollingUpdate(t *testing.T) {
	const replicas, surge = 50, 13 // 25% of 50, rounded up
	ctx, cfg, dyn, ns := childsetScenario(t, "workerset-roll-", workerset.CRD)
	workers := dyn.Resource(workersResource).Namespace(ns)
	sets := dyn.Resource(workerSetsResource).Namespace(ns)
	revisions := dyn.Resource(appsv1.SchemeGroupVersion.WithResource("controllerrevisions")).Namespace(ns)

	sampler := &rolloutSampler{maxTotal: replicas + surge, minReady: replicas, ready: func(u *unstructured.Unstructured) bool {
		ready, _, _ := unstructured.NestedBool(u.Object, "status", "ready")
		return ready
	}}
	startRolloutSampler(t, dyn, ns, workersResource, sampler)
	startAgents(t, ctx, workers)
	defer startWorkerSetManager(t, cfg)()

	set := createPool(t, ctx, sets, replicas, map[string]any{
		"strategy": map[string]any{"rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": int64(0)}},
	})
	first := waitRolledOut(t, ctx, sets, workers, set.GetUID(), "worker:1", replicas)

	roll := func(image string) string {
		t.Helper()
		start := time.Now()
		rv := setImage(t, ctx, sets, image)
		update := waitRolledOut(t, ctx, sets, workers, set.GetUID(), image, replicas)
		rep := sampler.replay(rv, set.GetUID())
		t.Logf("rolled to %s in %s: %d events checked, max Workers %d (bound %d), min ready %d (bound %d), Workers created %d",
			image, time.Since(start).Round(time.Millisecond), rep.Samples, rep.MaxTotal, replicas+surge, rep.MinReady, replicas, rep.Created)
		require.Empty(t, rep.Violations)
		require.GreaterOrEqual(t, rep.Samples, 2*replicas, "every Worker created and deleted was seen")
		require.Equal(t, replicas, rep.Created, "each Worker replaced once")
		return update
	}
	second := roll("worker:2")
	require.NotEqual(t, first, second)
	list, err := revisions.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 2)

	require.Equal(t, first, roll("worker:1"), "the rollback reuses the first revision")
	list, err = revisions.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 2, "no third revision")
	var firstUID types.UID
	for _, r := range list.Items {
		if r.GetName() == first {
			firstUID = r.GetUID()
			n, _, _ := unstructured.NestedInt64(r.Object, "revision")
			require.Equal(t, int64(3), n, "the reused revision is renumbered as the newest")
		}
	}

	// The revision watch: a revision deleted by someone else syncs its
	// owner, which records its template again (nothing else changes, so
	// only that event can trigger the sync).
	require.NoError(t, revisions.Delete(ctx, first, metav1.DeleteOptions{}))
	require.NoError(t, waitFor(time.Minute, func() (bool, error) {
		r, err := revisions.Get(ctx, first, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return r.GetUID() != firstUID, fmt.Errorf("still the deleted revision")
	}), "the deleted update revision was never recorded again")
}

// startWorkerSetManager runs ctrlruntime/examples/workerset in a manager
// of its own and returns its stop.
func startWorkerSetManager(t *testing.T, cfg *rest.Config) (stop func()) {
	t.Helper()
	return startChildsetManager(t, cfg, "0", func(mgr ctrl.Manager) error {
		_, err := workerset.SetupWithManager(mgr, childsetQueue)
		return err
	})
}

// createPool creates the WorkerSet "pool" of replicas Workers of image
// worker:1, with the spec fields of extra besides.
func createPool(t *testing.T, ctx context.Context, sets dynamic.ResourceInterface, replicas int64, extra map[string]any) *unstructured.Unstructured {
	t.Helper()
	spec := map[string]any{
		"replicas": replicas,
		"selector": map[string]any{"matchLabels": map[string]any{"pool": "a"}},
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"pool": "a"}},
			"spec":     map[string]any{"machineClass": "m5.large", "image": "worker:1"},
		},
	}
	maps.Copy(spec, extra)
	set, err := sets.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": workerset.GroupVersion.String(), "kind": "WorkerSet",
		"metadata": map[string]any{"name": "pool"},
		"spec":     spec,
	}}, metav1.CreateOptions{})
	require.NoError(t, err)
	return set
}

// setImage changes the WorkerSet's template image and returns the
// resourceVersion of the change.
func setImage(t *testing.T, ctx context.Context, sets dynamic.ResourceInterface, image string) int64 {
	t.Helper()
	return editSet(t, ctx, sets, func(obj map[string]any) error {
		return unstructured.SetNestedField(obj, image, "spec", "template", "spec", "image")
	})
}

// waitRolledOut waits until the set's status reports every Worker updated
// and ready at one revision, the Workers say the same, and returns that
// revision's name.
func waitRolledOut(t *testing.T, ctx context.Context, sets, workers dynamic.ResourceInterface, owner types.UID, image string, replicas int64) string {
	t.Helper()
	return waitOwnerRolledOut(t, ctx, sets, workers, "pool", owner, replicas, image, func(u *unstructured.Unstructured) string {
		img, _, _ := unstructured.NestedString(u.Object, "spec", "image")
		return img
	})
}

// waitOwnerRolledOut waits until the status of the owner called name
// reports every child updated and ready at one revision, and its children
// say the same (imageOf reads a child's image); it returns the revision.
func waitOwnerRolledOut(t *testing.T, ctx context.Context, owners, children dynamic.ResourceInterface, name string, owner types.UID,
	replicas int64, image string, imageOf func(*unstructured.Unstructured) string) string {
	t.Helper()
	var update string
	require.NoError(t, waitFor(3*time.Minute, func() (bool, error) {
		set, err := owners.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		st, _, _ := unstructured.NestedMap(set.Object, "status")
		update, _ = st["updateRevision"].(string)
		if update == "" || st["currentRevision"] != update || st["updatedReplicas"] != replicas || st["readyReplicas"] != replicas || st["replicas"] != replicas {
			return false, fmt.Errorf("status %v", st)
		}
		live, err := controlledLive(ctx, children, owner)
		if err != nil {
			return false, err
		}
		if int64(len(live)) != replicas {
			return false, fmt.Errorf("%d live children", len(live))
		}
		for _, c := range live {
			img := imageOf(&c)
			if img != image || name+"-"+c.GetLabels()[history.ControllerRevisionHashLabel] != update {
				return false, fmt.Errorf("child %s at %s, %s", c.GetName(), img, c.GetLabels()[history.ControllerRevisionHashLabel])
			}
		}
		return true, nil
	}), "%s never rolled out to %s", name, image)
	return update
}

// startAgents marks every Worker ready soon after it appears, as the
// Workers' agents would, until the test ends.
func startAgents(t *testing.T, ctx context.Context, workers dynamic.ResourceInterface) {
	t.Helper()
	startAgentsWhere(t, ctx, workers, func(*unstructured.Unstructured) bool { return true })
}

// startAgentsWhere is startAgents for the Workers healthy says will come
// up; the others never become ready.
func startAgentsWhere(t *testing.T, ctx context.Context, workers dynamic.ResourceInterface, healthy func(*unstructured.Unstructured) bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			list, err := workers.List(ctx, metav1.ListOptions{})
			if err == nil {
				for i := range list.Items {
					w := &list.Items[i]
					if ready, _, _ := unstructured.NestedBool(w.Object, "status", "ready"); ready || w.GetDeletionTimestamp() != nil || !healthy(w) {
						continue
					}
					_ = unstructured.SetNestedField(w.Object, true, "status", "ready")
					_ = unstructured.SetNestedField(w.Object, time.Now().UTC().Format(time.RFC3339), "status", "readySince")
					_, _ = workers.UpdateStatus(ctx, w, metav1.UpdateOptions{})
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}

// rolloutSampler records every watched state of the Workers and replays
// them in resourceVersion order, checking a rollout's bounds.
type rolloutSampler struct {
	ready              func(*unstructured.Unstructured) bool
	maxTotal, minReady int

	mu     sync.Mutex
	events []rolloutEvent
	lastRV int64
}

type rolloutEvent struct {
	rv               int64
	name             string
	owner            types.UID
	exists, deleting bool
	ready            bool
}

func (s *rolloutSampler) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.record(obj, false) },
		UpdateFunc: func(_, cur any) { s.record(cur, false) },
		DeleteFunc: func(obj any) { s.record(obj, true) },
	}
}

func (s *rolloutSampler) record(obj any, deleted bool) {
	missed := false
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj, missed = tomb.Obj, true
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	ev := rolloutEvent{name: u.GetName(), exists: !deleted, deleting: u.GetDeletionTimestamp() != nil}
	if ref := metav1.GetControllerOf(u); ref != nil {
		ev.owner = ref.UID
	}
	ev.ready = s.ready(u)
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := strconv.ParseInt(u.GetResourceVersion(), 10, 64)
	if err != nil || missed {
		n = s.lastRV
	}
	ev.rv = n
	s.lastRV = max(s.lastRV, n)
	s.events = append(s.events, ev)
}

type rolloutReport struct {
	Samples    int // Worker events at or after the change, each checked
	Created    int // Workers that appeared after the change
	MaxTotal   int // the most Workers of the owner, those being deleted included
	MinReady   int // the fewest ready Workers not being deleted
	Violations []string
}

// replay rebuilds the children of owner in resourceVersion order and
// checks every event after from: total ≤ maxTotal and ready ≥ minReady.
func (s *rolloutSampler) replay(from int64, owner types.UID) rolloutReport {
	maxTotal, minReady := s.maxTotal, s.minReady
	s.mu.Lock()
	events := slices.Clone(s.events)
	s.mu.Unlock()
	slices.SortStableFunc(events, func(a, b rolloutEvent) int { return cmp.Compare(a.rv, b.rv) })
	type state struct{ deleting, ready bool }
	workers := map[string]state{}
	rep := rolloutReport{MinReady: -1}
	for _, ev := range events {
		_, existed := workers[ev.name]
		if ev.exists && ev.owner == owner {
			workers[ev.name] = state{deleting: ev.deleting, ready: ev.ready}
		} else {
			delete(workers, ev.name)
		}
		if ev.rv <= from {
			continue
		}
		if !existed && ev.exists && ev.owner == owner {
			rep.Created++
		}
		total, ready := len(workers), 0
		for _, w := range workers {
			if w.ready && !w.deleting {
				ready++
			}
		}
		rep.Samples++
		rep.MaxTotal = max(rep.MaxTotal, total)
		if rep.MinReady < 0 || ready < rep.MinReady {
			rep.MinReady = ready
		}
		if total > maxTotal {
			rep.Violations = append(rep.Violations, fmt.Sprintf("rv %d (%s): %d Workers, bound %d", ev.rv, ev.name, total, maxTotal))
		}
		if ready < minReady {
			rep.Violations = append(rep.Violations, fmt.Sprintf("rv %d (%s): %d ready Workers, bound %d", ev.rv, ev.name, ready, minReady))
		}
	}
	if len(rep.Violations) > 10 {
		rep.Violations = append(rep.Violations[:10], strings.Repeat(".", 3))
	}
	return rep
}

// startRolloutSampler watches the children (res) of ns for s, from before
// the scenario writes anything, until the test ends.
func startRolloutSampler(t *testing.T, dyn dynamic.Interface, ns string, res schema.GroupVersionResource, s *rolloutSampler) {
	t.Helper()
	stop := make(chan struct{})
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, ns, nil)
	_, err := factory.ForResource(res).Informer().AddEventHandler(s.handler())
	require.NoError(t, err)
	factory.Start(stop)
	t.Cleanup(func() {
		close(stop)
		factory.Shutdown()
	})
	for r, ok := range factory.WaitForCacheSync(stop) {
		require.True(t, ok, "informer of %s synced", r)
	}
}
