package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"

	"github.com/ctrlkit/ctrlkit/examples/gang"
	"github.com/ctrlkit/ctrlkit/examples/workerset"
	"github.com/ctrlkit/ctrlkit/podstate"
)

// rollingPhase is one change of a rolling owner's spec: a merge patch,
// then a wait until its children settle.
type rollingPhase struct {
	name  string
	patch string
}

// The phases both rolling scenarios go through, with the image each
// template change sets: a rollout with surge and no unavailability, one
// with unavailability and no surge, a partitioned one (10 children kept at
// the previous revision) then released, and a rollback to the first
// template.
func rollingPhases(imagePatch func(image string) string) []rollingPhase {
	strategy := func(surge, unavailable any, partition int) string {
		b, _ := json.Marshal(map[string]any{"maxSurge": surge, "maxUnavailable": unavailable, "partition": partition})
		return string(b)
	}
	both := func(image, ru string) string {
		return fmt.Sprintf(`{"spec":{"strategy":{"rollingUpdate":%s},%s}}`, ru, imagePatch(image))
	}
	return []rollingPhase{
		{"maxSurge 25%, maxUnavailable 0", both("v2", strategy("25%", 0, 0))},
		{"maxSurge 0, maxUnavailable 10%", both("v3", strategy(0, "10%", 0))},
		{"partition 10", both("v4", strategy(0, "10%", 10))},
		{"partition released", fmt.Sprintf(`{"spec":{"strategy":{"rollingUpdate":%s}}}`, strategy(0, "10%", 0))},
		{"rollback to v1", both("v1", strategy(0, "10%", 0))},
	}
}

// TestWorkerSetRollingUpdate rolls 50 Workers of the WorkerSet example
// through rollingPhases on a real apiserver; the test marks each Worker
// ready a moment after it appears, as whatever runs it would.
func TestWorkerSetRollingUpdate(t *testing.T) {
	s := newScenario(t, 3*time.Minute)
	require.NoError(t, s.env.InstallCRDsFromYAML(s.ctx, workerset.CRD))
	dyn, err := dynamic.NewForConfig(s.clientConfig(nil))
	require.NoError(t, err)
	sampler := newRolloutSampler(t, dyn, s.ns, "pool", "WorkerSet", workerset.SetResource, workerset.WorkerResource, false, workerReadiness)
	sets := dyn.Resource(workerset.SetResource).Namespace(s.ns)
	workers := dyn.Resource(workerset.WorkerResource).Namespace(s.ns)
	s.markReady(dyn, workerset.WorkerResource, func(u *unstructured.Unstructured) bool {
		ready, _ := workerReadiness(u)
		return ready
	}, func(ctx context.Context, name string) error {
		patch := fmt.Sprintf(`{"status":{"ready":true,"readySince":%q}}`, time.Now().UTC().Format(time.RFC3339))
		_, err := workers.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
		return err
	})

	set := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"replicas":             int64(50),
			"minReadySeconds":      int64(1),
			"revisionHistoryLimit": int64(5),
			"selector":             map[string]any{"matchLabels": map[string]any{"app": "pool"}},
			"strategy":             map[string]any{"rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": int64(0)}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "pool"}},
				"spec":     map[string]any{"image": "worker:v1"},
			},
		},
	}}
	set.SetGroupVersionKind(workerset.SetKind)
	set.SetName("pool")
	_, err = sets.Create(s.ctx, set, metav1.CreateOptions{})
	require.NoError(t, err)
	warnings := s.runRollingWorkerSet()

	s.runRollingPhases(sampler, sets, "pool", rollingPhases(func(image string) string {
		return fmt.Sprintf(`"template":{"spec":{"image":"worker:%s"}}`, image)
	}))
	require.Empty(t, warnings.list(), "Warning events")
}

// TestGangRollingUpdate rolls the 50 pods of a Gang (indexed, named
// gang-0 ... gang-49) through rollingPhases on a real apiserver; the test
// sets each pod's Ready condition a moment after it appears, as a kubelet
// would. The pods are never bound, so a deleted one is gone at once.
func TestGangRollingUpdate(t *testing.T) {
	s := newScenario(t, 3*time.Minute)
	sampler := s.rollGangPods("gang", true, s.runRollingGang)
	for name := range sampler.replay().seen {
		require.Regexp(t, `^gang-([0-9]|[1-4][0-9])$`, name, "no pod outside gang-0 ... gang-49")
	}
}

// rollGangPods creates a Gang called name of 50 pods (maxSurge 25%,
// maxUnavailable 0, minReadySeconds 1), marks each pod Ready a moment after
// it appears, starts the controller with start, and runs rollingPhases,
// sampling the whole rollout; indexed says how the controller names the
// pods. It fails on any Warning event.
func (s *scenario) rollGangPods(name string, indexed bool, start func() *warningRecorder) *rolloutSampler {
	t := s.t
	require.NoError(t, s.env.InstallCRDsFromYAML(s.ctx, gang.CRD))
	dyn, err := dynamic.NewForConfig(s.clientConfig(nil))
	require.NoError(t, err)
	pods := corev1.SchemeGroupVersion.WithResource("pods")
	sampler := newRolloutSampler(t, dyn, s.ns, name, "Gang", gang.Resource, pods, indexed, podReadiness)
	gangs := dyn.Resource(gang.Resource).Namespace(s.ns)
	ready := true
	s.markReady(dyn, pods, func(u *unstructured.Unstructured) bool {
		ok, _ := podReadiness(u)
		return ok
	}, func(_ context.Context, pod string) error {
		return s.setPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod}}, podState{ready: &ready}, time.Now())
	})

	tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ptrTemplate(map[string]string{"app": name}))
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(tmpl, []any{map[string]any{"name": "main", "image": "trainer:v1"}}, "spec", "containers"))
	g := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"replicas":             int64(50),
			"minReadySeconds":      int64(1),
			"revisionHistoryLimit": int64(5),
			"strategy":             map[string]any{"rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": int64(0)}},
			"template":             tmpl,
		},
	}}
	g.SetGroupVersionKind(gang.Kind)
	g.SetName(name)
	_, err = gangs.Create(s.ctx, g, metav1.CreateOptions{})
	require.NoError(t, err)
	warnings := start()

	s.runRollingPhases(sampler, gangs, name, rollingPhases(func(image string) string {
		return fmt.Sprintf(`"template":{"spec":{"containers":[{"name":"main","image":"trainer:%s"}]}}`, image)
	}))
	require.Empty(t, warnings.list(), "Warning events")
	return sampler
}

// runRollingPhases waits for the owner's first 50 children, then applies
// each phase and waits for it to settle, checking the revisions, the
// partition and the status on the way.
func (s *scenario) runRollingPhases(sampler *rolloutSampler, owners dynamic.ResourceInterface, name string, phases []rollingPhase) {
	t := s.t
	t.Helper()
	start := time.Now()
	first := s.settleRollout(sampler, 50, "", "the first 50 children")
	s.waitRollingStatus(owners, name, first)
	firstRev := s.revision(name + "-" + first)
	t.Logf("50 children created and available in %s", time.Since(start).Round(time.Millisecond))

	previous := first
	for _, p := range phases {
		phaseStart := time.Now()
		revisionsBefore := s.revisionCount()
		sampler.startPhase(p.name)
		if strings.Contains(p.name, "partition 10") {
			sampler.holdPartition(previous)
		}
		_, err := owners.Patch(s.ctx, name, types.MergePatchType, []byte(p.patch), metav1.PatchOptions{})
		require.NoError(t, err, p.name)
		if strings.Contains(p.name, "partition 10") {
			s.settlePartition(sampler, previous, 10)
			t.Logf("phase %q: 40 updated, 10 held, in %s", p.name, time.Since(phaseStart).Round(time.Millisecond))
			continue
		}
		hash := s.settleRollout(sampler, 50, previous, p.name)
		s.waitRollingStatus(owners, name, hash)
		revisionsAfter := s.revisionCount()
		if strings.HasPrefix(p.name, "rollback") {
			require.Equal(t, first, hash, "the rollback returns to the first revision")
			require.Equal(t, revisionsBefore, revisionsAfter, "the rollback creates no revision")
			back := s.revision(name + "-" + first)
			require.Equal(t, firstRev.UID, back.UID, "the rollback reuses the first revision object")
			require.Greater(t, back.Revision, firstRev.Revision, "the reused revision is renumbered as the newest")
		}
		t.Logf("phase %q: settled in %s; revisions %d -> %d", p.name, time.Since(phaseStart).Round(time.Millisecond), revisionsBefore, revisionsAfter)
		previous = hash
	}
	require.Equal(t, 4, s.revisionCount(), "revisions v1 ... v4, the rollback reusing v1's")
	// The bounds are used, not only kept: Workers surge by 13 (25% of 50)
	// with none unavailable; Gang pods, replaced in place, never surge
	// and go one at a time; without surge 5 (10%) go at once.
	figures := map[string]phaseFigures{}
	for _, f := range sampler.replay().phases {
		figures[f.name] = f
	}
	surged := figures[phases[0].name]
	if sampler.indexed {
		require.Equal(t, 50, surged.maxTotal, "an index is replaced in place")
		require.Equal(t, 49, surged.minAvail, "maxUnavailable 0 counts as 1 for indexed children")
	} else {
		require.Equal(t, 63, surged.maxTotal, "maxSurge 25% of 50")
		require.Equal(t, 50, surged.minAvail, "maxUnavailable 0")
	}
	unsurged := figures[phases[1].name]
	require.Equal(t, 50, unsurged.maxTotal, "maxSurge 0")
	require.Equal(t, 45, unsurged.minAvail, "maxUnavailable 10% of 50")
	t.Logf("all phases in %s", time.Since(start).Round(time.Millisecond))
}

// settlePartition waits until exactly held children of the 50 are at the
// revision hash and the rest at the newest one, and a second passes
// without events beyond status writes.
func (s *scenario) settlePartition(sampler *rolloutSampler, hash string, held int) {
	s.t.Helper()
	s.eventually(time.Minute, "the partition's 40 updated and 10 held", func() (bool, string) {
		rep := sampler.replay()
		at := 0
		for _, h := range rep.live {
			if h == hash {
				at++
			}
		}
		return len(rep.live) == 50 && at == held, fmt.Sprintf("%d live, %d at %s", len(rep.live), at, hash)
	})
	// A partition that leaked would show within a few more syncs.
	time.Sleep(2 * time.Second)
	rep := sampler.replay()
	at := 0
	for _, h := range rep.live {
		if h == hash {
			at++
		}
	}
	require.Equal(s.t, held, at, "children held at %s by the partition", hash)
}

// waitRollingStatus waits until the owner's status reports the rollout
// complete at hash for its current generation.
func (s *scenario) waitRollingStatus(owners dynamic.ResourceInterface, name, hash string) {
	s.t.Helper()
	want := map[string]any{
		"replicas": int64(50), "readyReplicas": int64(50), "availableReplicas": int64(50), "updatedReplicas": int64(50),
		"currentRevision": name + "-" + hash, "updateRevision": name + "-" + hash, "collisionCount": int64(0),
	}
	s.eventually(time.Minute, "the status of a finished rollout", func() (bool, string) {
		u, err := owners.Get(s.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		status, _, _ := unstructured.NestedMap(u.Object, "status")
		for k, v := range want {
			if status[k] != v {
				return false, fmt.Sprintf("status %v", status)
			}
		}
		return status["observedGeneration"] == u.GetGeneration(), fmt.Sprintf("generation %d, status %v", u.GetGeneration(), status)
	})
}

func (s *scenario) revisionCount() int {
	s.t.Helper()
	list, err := s.client.AppsV1().ControllerRevisions(s.ns).List(s.ctx, metav1.ListOptions{})
	require.NoError(s.t, err)
	return len(list.Items)
}

func (s *scenario) revision(name string) *appsv1.ControllerRevision {
	s.t.Helper()
	rev, err := s.client.AppsV1().ControllerRevisions(s.ns).Get(s.ctx, name, metav1.GetOptions{})
	require.NoError(s.t, err)
	return rev
}

// workerReadiness is a Worker's status.ready and status.readySince.
func workerReadiness(u *unstructured.Unstructured) (bool, time.Time) {
	ready, _, _ := unstructured.NestedBool(u.Object, "status", "ready")
	since, _, _ := unstructured.NestedString(u.Object, "status", "readySince")
	at, _ := time.Parse(time.RFC3339, since)
	return ready, at
}

// podReadiness is a pod's Ready condition and when it became true.
func podReadiness(u *unstructured.Unstructured) (bool, time.Time) {
	var pod corev1.Pod
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &pod); err != nil {
		return false, time.Time{}
	}
	return podstate.IsReady(&pod), podstate.ReadyTime(&pod).Time
}

// markReady stands in for whatever makes children ready (a kubelet, a
// worker's agent): 100 ms after a child of gvr first appears, and is not
// ready, it calls mark once for it. It stops at the test's cleanup.
func (s *scenario) markReady(dyn dynamic.Interface, gvr schema.GroupVersionResource, ready func(*unstructured.Unstructured) bool,
	mark func(ctx context.Context, name string) error) {
	const delay = 100 * time.Millisecond
	ctx, cancel := context.WithCancel(s.ctx)
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, s.ns, nil)
	indexer := factory.ForResource(gvr).Informer().GetIndexer()
	factory.Start(ctx.Done())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		seen, marked := map[types.UID]time.Time{}, map[types.UID]bool{}
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for _, obj := range indexer.List() {
				u, ok := obj.(*unstructured.Unstructured)
				if !ok || u.GetDeletionTimestamp() != nil || marked[u.GetUID()] || ready(u) {
					continue
				}
				first, ok := seen[u.GetUID()]
				if !ok {
					seen[u.GetUID()] = time.Now()
					continue
				}
				if time.Since(first) < delay {
					continue
				}
				marked[u.GetUID()] = true
				if err := mark(ctx, u.GetName()); err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
					s.t.Errorf("marking %s ready: %v", u.GetName(), err)
				}
			}
		}
	}()
	s.t.Cleanup(func() {
		cancel()
		wg.Wait()
		factory.Shutdown()
	})
}

// runRollingWorkerSet starts the WorkerSet controller with rolling
// updates, on the controller's (counted, audited) clients.
func (s *scenario) runRollingWorkerSet() *warningRecorder {
	s.t.Helper()
	ctx, cancel := context.WithCancel(s.ctx)
	dyn, err := dynamic.NewForConfig(s.ctrlConfig)
	require.NoError(s.t, err)
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, s.ns, nil)
	typed := informers.NewSharedInformerFactoryWithOptions(s.ctrlClient, 0, informers.WithNamespace(s.ns))
	rec := &warningRecorder{}
	c, err := workerset.NewController(ctx, dyn, factory, workerset.WithEventRecorder(rec),
		workerset.WithRollingUpdates(s.ctrlClient, typed.Apps().V1().ControllerRevisions()))
	if err != nil {
		cancel()
		s.t.Fatalf("construct WorkerSet controller: %v", err)
	}
	factory.Start(ctx.Done())
	typed.Start(ctx.Done())
	typed.WaitForCacheSync(ctx.Done())
	s.runUntilCleanup(ctx, cancel, c.Run, factory.Shutdown, typed.Shutdown)
	return rec
}

// runRollingGang starts the Gang controller with rolling updates: pods and
// revisions through the controller's typed client, Gangs and their status
// through its dynamic client.
func (s *scenario) runRollingGang() *warningRecorder {
	s.t.Helper()
	ctx, cancel := context.WithCancel(s.ctx)
	dyn, err := dynamic.NewForConfig(s.ctrlConfig)
	require.NoError(s.t, err)
	typed := informers.NewSharedInformerFactoryWithOptions(s.ctrlClient, 0, informers.WithNamespace(s.ns))
	gangs := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, s.ns, nil)
	rec := &warningRecorder{}
	c, err := gang.NewController(ctx, s.ctrlClient, typed.Core().V1().Pods(), gangs, gang.WithEventRecorder(rec),
		gang.WithRollingUpdates(dyn, typed.Apps().V1().ControllerRevisions()))
	if err != nil {
		cancel()
		s.t.Fatalf("construct Gang controller: %v", err)
	}
	typed.Start(ctx.Done())
	gangs.Start(ctx.Done())
	typed.WaitForCacheSync(ctx.Done())
	s.runUntilCleanup(ctx, cancel, c.Run, typed.Shutdown, gangs.Shutdown)
	return rec
}
