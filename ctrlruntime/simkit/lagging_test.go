package simkit_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/crclient"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/simkit"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// These tests put a naive controller-runtime reconciler and ctrlkit's
// childset side by side on a cache that has not seen the controller's own
// creates: the Worker watch is held while the WorkerSet is reconciled a
// few times (as a controller does when events about the owner keep
// coming), then released.

const (
	replicas = 3
	passes   = 3 // reconciles while the cache lags
	// naiveIndexLabel is where the naive indexed reconciler keeps a
	// Worker's index.
	naiveIndexLabel = "demo.ctrlkit.io/index"
)

var trainKey = types.NamespacedName{Namespace: "ml", Name: "train"}

// naiveReconciler is what many first controllers look like: list the
// children from the cache, create the missing number with generated names.
func naiveReconciler(c client.Client, scheme *runtime.Scheme) reconcile.Func {
	return func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		var set WorkerSet
		if err := c.Get(ctx, req.NamespacedName, &set); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		var workers WorkerList
		if err := c.List(ctx, &workers, client.InNamespace(set.Namespace), client.MatchingLabels{"set": set.Name}); err != nil {
			return reconcile.Result{}, err
		}
		for i := len(workers.Items); i < int(set.Spec.Replicas); i++ {
			w := &Worker{ObjectMeta: metav1.ObjectMeta{GenerateName: set.Name + "-", Namespace: set.Namespace,
				Labels: map[string]string{"set": set.Name}}}
			if err := controllerutil.SetControllerReference(&set, w, scheme); err != nil {
				return reconcile.Result{}, err
			}
			if err := c.Create(ctx, w); err != nil {
				return reconcile.Result{}, err
			}
		}
		return reconcile.Result{}, nil
	}
}

// naiveIndexedReconciler gives each Worker an index: it looks in the cache
// for the indices it has and creates a Worker, with a generated name and
// an index label, for every index it does not see.
func naiveIndexedReconciler(c client.Client, scheme *runtime.Scheme) reconcile.Func {
	return func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		var set WorkerSet
		if err := c.Get(ctx, req.NamespacedName, &set); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		var workers WorkerList
		if err := c.List(ctx, &workers, client.InNamespace(set.Namespace), client.MatchingLabels{"set": set.Name}); err != nil {
			return reconcile.Result{}, err
		}
		seen := map[int]bool{}
		for _, w := range workers.Items {
			if i, err := strconv.Atoi(w.Labels[naiveIndexLabel]); err == nil {
				seen[i] = true
			}
		}
		for i := range int(set.Spec.Replicas) {
			if seen[i] {
				continue
			}
			w := &Worker{ObjectMeta: metav1.ObjectMeta{GenerateName: set.Name + "-", Namespace: set.Namespace,
				Labels: map[string]string{"set": set.Name, naiveIndexLabel: strconv.Itoa(i)}}}
			if err := controllerutil.SetControllerReference(&set, w, scheme); err != nil {
				return reconcile.Result{}, err
			}
			if err := c.Create(ctx, w); err != nil {
				return reconcile.Result{}, err
			}
		}
		return reconcile.Result{}, nil
	}
}

// workerSetSpec is childset's owner adapter: WorkerSets from the cache.
type workerSetSpec struct{ reader client.Reader }

func (s workerSetSpec) Get(namespace, name string) (*WorkerSet, error) {
	set := &WorkerSet{}
	if err := s.reader.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, set); err != nil {
		return nil, err
	}
	return set, nil
}
func (workerSetSpec) GroupVersionKind() schema.GroupVersionKind { return workerSetGVK }
func (workerSetSpec) Replicas(s *WorkerSet) int32               { return s.Spec.Replicas }
func (workerSetSpec) Selector(s *WorkerSet) (labels.Selector, error) {
	return labels.SelectorFromSet(labels.Set{"set": s.Name}), nil
}
func (workerSetSpec) NewChild(s *WorkerSet) (*Worker, error) {
	return &Worker{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"set": s.Name}}, Spec: WorkerSpec{Image: "worker:1"}}, nil
}

// workerKind is childset's child adapter: Workers from the cache's
// informer, always ready.
type workerKind struct{ childset.Lister[*Worker] }

func (workerKind) Ready(*Worker) bool { return true }

// ctrlkitReconciler wires childset into the kit: the Worker informer's
// events feed its expectations, writes go through the kit's client. It is
// called before the kit starts, so the handlers see every event.
func ctrlkitReconciler(t *testing.T, kit *simkit.Kit, opts ...childset.Option) reconcile.Func {
	t.Helper()
	inf, err := kit.Cache().GetInformer(context.Background(), &Worker{})
	require.NoError(t, err)
	shared, ok := inf.(toolscache.SharedIndexInformer)
	require.True(t, ok, "the kit's cache hands out client-go informers")
	require.NoError(t, childset.AddControllerIndexer(shared))
	writer := objectcontrol.New("Worker", crclient.NewWriter[*Worker](kit.Client()), nil, types.MergePatchType)
	r := childset.NewReconciler[*WorkerSet, *Worker](workerSetSpec{kit.Client()},
		workerKind{childset.IndexerLister[*Worker](shared.GetIndexer())}, writer, opts...)
	_, err = shared.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if w, ok := obj.(*Worker); ok {
				r.ObserveAdd(w)
			}
		},
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*Worker)
			c, ok2 := cur.(*Worker)
			if ok1 && ok2 {
				r.ObserveUpdate(o, c)
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if w, ok := obj.(*Worker); ok {
				r.ObserveDelete(w, false)
			}
		},
	})
	require.NoError(t, err)
	return func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		res, err := r.Reconcile(ctx, req.String())
		return reconcile.Result{RequeueAfter: res.RequeueAfter}, err
	}
}

// lagRun is what one reconciler did on a lagging cache.
type lagRun struct {
	during  []Worker // what exists after the passes on the held cache
	settled []Worker // what exists once the cache caught up and one more pass ran
}

// runLagging creates a WorkerSet of replicas, waits until the cache has it,
// holds the Worker watch, reconciles passes times, releases, waits for the
// cache to show every Worker, reconciles once more and reports the Workers
// that exist (read from the cluster, not the cache).
func runLagging(ctx context.Context, t *testing.T, kit *simkit.Kit, rec reconcile.Reconciler) lagRun {
	t.Helper()
	c := kit.Client()
	require.NoError(t, c.Create(ctx, &WorkerSet{ObjectMeta: metav1.ObjectMeta{Namespace: trainKey.Namespace, Name: trainKey.Name},
		Spec: WorkerSetSpec{Replicas: replicas}}))
	require.Eventually(t, func() bool { return c.Get(ctx, trainKey, &WorkerSet{}) == nil },
		30*time.Second, 5*time.Millisecond, "the cache never showed the WorkerSet")
	var warm WorkerList
	require.NoError(t, c.List(ctx, &warm), "the Worker informer is synced before the hold")

	release := kit.HoldWatches(&Worker{})
	for range passes {
		_, err := rec.Reconcile(ctx, reconcile.Request{NamespacedName: trainKey})
		require.NoError(t, err)
	}
	var run lagRun
	run.during = existingWorkers(ctx, t, kit)
	release()

	require.Eventually(t, func() bool {
		var cached WorkerList
		return c.List(ctx, &cached) == nil && len(cached.Items) == len(run.during)
	}, 30*time.Second, 5*time.Millisecond, "the cache never caught up")
	_, err := rec.Reconcile(ctx, reconcile.Request{NamespacedName: trainKey})
	require.NoError(t, err)
	run.settled = existingWorkers(ctx, t, kit)
	return run
}

// existingWorkers reads the Workers from the cluster itself.
func existingWorkers(ctx context.Context, t *testing.T, kit *simkit.Kit) []Worker {
	t.Helper()
	var list WorkerList
	require.NoError(t, kit.APIReader().List(ctx, &list, client.InNamespace(trainKey.Namespace)))
	return list.Items
}

func newKit(t *testing.T) *simkit.Kit {
	t.Helper()
	kit, err := simkit.New(newScheme())
	require.NoError(t, err)
	return kit
}

// On a held cache the naive reconciler creates replicas Workers on every
// pass, since it cannot see the ones it made; childset creates replicas once
// and then waits for the cache to show them (its expectations).
func TestLaggingCacheInterchangeable(t *testing.T) {
	naiveKit := newKit(t)
	naiveCtx := naiveKit.StartTest(t)
	naive := runLagging(naiveCtx, t, naiveKit, naiveReconciler(naiveKit.Client(), naiveKit.Scheme()))

	kit := newKit(t)
	rec := ctrlkitReconciler(t, kit)
	ctx := kit.StartTest(t)
	ours := runLagging(ctx, t, kit, rec)

	t.Logf("naive: %d Workers for replicas %d after %d passes on a lagging cache; ctrlkit: %d",
		len(naive.during), replicas, passes, len(ours.during))
	assert.Greater(t, len(naive.during), replicas, "the naive reconciler over-creates on a lagging cache")
	assert.Len(t, naive.settled, len(naive.during), "nothing takes the extra Workers away")
	assert.Len(t, ours.during, replicas, "childset creates exactly replicas Workers")
	assert.Len(t, ours.settled, replicas, "and no more once the cache caught up")
	for _, w := range ours.settled {
		ref := metav1.GetControllerOf(&w)
		require.NotNil(t, ref, "Worker %s has a controller", w.Name)
		assert.Equal(t, "train", ref.Name)
		assert.NotEmpty(t, w.UID, "the cluster filled in the UID")
	}
}

// indexCounts counts the Workers holding each index, read from label.
func indexCounts(workers []Worker, label string) map[string]int {
	counts := map[string]int{}
	for _, w := range workers {
		counts[w.Labels[label]]++
	}
	return counts
}

// On a held cache the naive indexed reconciler creates every index again on
// every pass: duplicates. childset's indexed mode names each Worker
// <set>-<index>, expects each by name and creates each index once.
func TestLaggingCacheIndexed(t *testing.T) {
	naiveKit := newKit(t)
	naiveCtx := naiveKit.StartTest(t)
	naive := runLagging(naiveCtx, t, naiveKit, naiveIndexedReconciler(naiveKit.Client(), naiveKit.Scheme()))

	kit := newKit(t)
	rec := ctrlkitReconciler(t, kit, childset.WithIndexedNames(nil))
	ctx := kit.StartTest(t)
	ours := runLagging(ctx, t, kit, rec)

	naiveCounts := indexCounts(naive.during, naiveIndexLabel)
	oursCounts := indexCounts(ours.during, childset.IndexLabel)
	t.Logf("naive indexed: %d Workers for replicas %d after %d passes on a lagging cache, per index %v; ctrlkit: %d, per index %v",
		len(naive.during), replicas, passes, naiveCounts, len(ours.during), oursCounts)
	duplicated := 0
	for _, n := range naiveCounts {
		if n > 1 {
			duplicated++
		}
	}
	assert.Positive(t, duplicated, "the naive indexed reconciler duplicates indices on a lagging cache")

	want := map[string]int{"0": 1, "1": 1, "2": 1}
	assert.Equal(t, want, oursCounts, "childset holds each index exactly once")
	assert.Equal(t, want, indexCounts(ours.settled, childset.IndexLabel), "and still does once the cache caught up")
	var names []string
	for _, w := range ours.settled {
		names = append(names, w.Name)
	}
	slices.Sort(names)
	assert.Equal(t, []string{"train-0", "train-1", "train-2"}, names)
}
