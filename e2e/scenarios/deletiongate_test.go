package scenarios

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/examples/workerset"
	"github.com/ctrlkit/ctrlkit/podset"
)

const (
	// drainLabel is the scenario's pre-delete gate: what a drain
	// controller would watch for and clear.
	drainLabel = "e2e.ctrlkit.io/drain"
	// gateTimeoutAnnotation sets an owner's gate timeout (a Go duration);
	// without it the gate holds for an hour, longer than any scenario.
	gateTimeoutAnnotation = "e2e.ctrlkit.io/gate-timeout"
)

// gatedReplicaSetKind is the example's ReplicaSet kind with a pre-delete
// gate on every owner.
type gatedReplicaSetKind struct{ *replicaset.ReplicaSetKind }

func (gatedReplicaSetKind) DeletionGate(rs *appsv1.ReplicaSet) childset.DeletionGate {
	timeout, err := time.ParseDuration(rs.Annotations[gateTimeoutAnnotation])
	if err != nil {
		timeout = time.Hour
	}
	return childset.DeletionGate{Label: drainLabel, Timeout: timeout}
}

// TestDeletionGatePods runs ReplicaSets with a pre-delete gate, through
// podset, on a real apiserver. Scaled from 5 to 3, the owner marks two
// victims and deletes none while the gate holds: a sampler of both watches
// sees the owner with neither more pods than the 5 it had nor fewer than
// the 3 it wants, throughout. Releasing one victim's label deletes exactly
// that one, the other staying marked. A second owner, whose gate times out
// after 3s, loses its victim no sooner than 3s after the mark and soon
// after, with a DeletionGateTimeout Warning event.
func TestDeletionGatePods(t *testing.T) {
	s := newScenario(t, 3*time.Minute)
	dyn, err := dynamic.NewForConfig(s.clientConfig(nil))
	require.NoError(t, err)
	sampler := newChildSampler(t, dyn, s.ns, appsv1.SchemeGroupVersion.WithResource("replicasets"),
		corev1.SchemeGroupVersion.WithResource("pods"), "ReplicaSet",
		func(u *unstructured.Unstructured) int64 {
			n, err := childset.NestedReplicas(u.Object, 1, "spec", "replicas")
			if err != nil {
				t.Errorf("ReplicaSet %s: %v", u.GetName(), err)
			}
			return int64(n)
		})
	s.runGatedReplicaSets()

	held := s.createRS("held", 5, map[string]string{"app": "held"})
	s.settleChildren(sampler, held.UID, 5)
	before := sampler.liveOf(held.UID)
	s.scaleRS("held", 3)
	var victims []string
	s.eventually(time.Minute, "two victims marked", func() (bool, string) {
		victims = s.marked("app=held")
		return len(victims) == 2, fmt.Sprintf("marked %v", victims)
	})
	// Held: a few seconds later nothing is deleted and no third pod is
	// marked, the owner's syncs in between (a status write each) included.
	time.Sleep(3 * time.Second)
	assert.Equal(t, before, sampler.liveOf(held.UID), "no pod deleted while the gate holds")
	assert.Equal(t, victims, s.marked("app=held"), "the same victims, and no more")
	s.waitRS("held", 30*time.Second, "the held status", func(rs *appsv1.ReplicaSet) bool { return rs.Status.Replicas == 5 })

	// Releasing one victim deletes exactly that one.
	released, kept := victims[0], victims[1]
	_, err = s.client.CoreV1().Pods(s.ns).Patch(s.ctx, released, types.MergePatchType,
		fmt.Appendf(nil, `{"metadata":{"labels":{%q:null}}}`, drainLabel), metav1.PatchOptions{})
	require.NoError(t, err)
	s.settleChildren(sampler, held.UID, 4)
	want := slices.DeleteFunc(slices.Clone(before), func(n string) bool { return n == released })
	assert.Equal(t, want, sampler.liveOf(held.UID), "only the released victim is deleted")
	time.Sleep(2 * time.Second)
	assert.Equal(t, want, sampler.liveOf(held.UID), "the other victim is still held")
	assert.Equal(t, []string{kept}, s.marked("app=held"))
	low, high := sampler.liveBounds(held.UID, 5)
	assert.Equal(t, 5, high, "never more pods than before the scale-in")
	assert.Equal(t, 4, low, "never fewer than the gate let go")

	// A gate that times out: 2 -> 1 with a 3s timeout.
	timed := s.createRS("timed", 2, map[string]string{"app": "timed"}, func(rs *appsv1.ReplicaSet) {
		rs.Annotations = map[string]string{gateTimeoutAnnotation: "3s"}
	})
	s.settleChildren(sampler, timed.UID, 2)
	s.scaleRS("timed", 1)
	var victim string
	var requested time.Time
	s.eventually(time.Minute, "the victim marked", func() (bool, string) {
		for _, p := range activePods(s.listPods("app=timed")) {
			if p.Labels[drainLabel] == childset.DeletionGatePending {
				victim = p.Name
				requested, err = time.Parse(time.RFC3339, p.Annotations[childset.DeletionRequestedAnnotation])
				require.NoError(t, err, "the mark's time")
				return true, ""
			}
		}
		return false, "none marked"
	})
	s.eventually(time.Minute, "the victim deleted", func() (bool, string) {
		live := sampler.liveOf(timed.UID)
		return len(live) == 1 && live[0] != victim, fmt.Sprintf("live %v", live)
	})
	// The mark's time is in whole seconds, at most a second before the
	// mark itself.
	took := time.Since(requested)
	assert.GreaterOrEqual(t, took, 3*time.Second, "deleted before the timeout")
	assert.Less(t, took, 15*time.Second, "deleted long after the timeout")
	s.eventually(30*time.Second, "the DeletionGateTimeout event", func() (bool, string) {
		events, err := s.client.CoreV1().Events(s.ns).List(s.ctx, metav1.ListOptions{FieldSelector: fields.Set{
			"reason": childset.ReasonDeletionGateTimeout, "involvedObject.name": "timed"}.String()})
		require.NoError(t, err)
		for _, e := range events.Items {
			if e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, victim) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events", len(events.Items))
	})
	assert.Equal(t, []string{kept}, s.marked("app=held"), "the held owner's gate has not timed out")
	t.Logf("held: victims %v, %s released; timed: %s deleted %s after its mark", victims, released, victim, took.Round(100*time.Millisecond))
}

// runGatedReplicaSets starts podset over gatedReplicaSetKind on the
// scenario's namespace, its events written to the API.
func (s *scenario) runGatedReplicaSets() {
	s.t.Helper()
	ctx, cancel := context.WithCancel(s.ctx)
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: s.ctrlClient.CoreV1().Events("")})
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "ctrlkit-e2e"})
	factory := informers.NewSharedInformerFactoryWithOptions(s.ctrlClient, 0, informers.WithNamespace(s.ns))
	rsInformer := factory.Apps().V1().ReplicaSets()
	kind, err := replicaset.NewReplicaSetKind(s.ctrlClient, rsInformer)
	require.NoError(s.t, err)
	c, err := podset.New(ctx, s.ctrlClient, factory.Core().V1().Pods(), rsInformer.Informer(), gatedReplicaSetKind{kind},
		podset.WithEventRecorder(recorder))
	require.NoError(s.t, err)
	factory.Start(ctx.Done())
	s.runUntilCleanup(ctx, cancel, c.Run, factory.Shutdown, broadcaster.Shutdown)
}

// marked names the live pods matching selector that the gate holds,
// sorted.
func (s *scenario) marked(selector string) []string {
	s.t.Helper()
	var out []string
	for _, p := range activePods(s.listPods(selector)) {
		if p.Labels[drainLabel] == childset.DeletionGatePending {
			out = append(out, p.Name)
		}
	}
	slices.Sort(out)
	return out
}

// liveBounds replays the owner uid's live children in revision order from
// the first time it had from of them, and returns the fewest and the most
// it had at once since.
func (s *childSampler) liveBounds(uid types.UID, from int) (low, high int) {
	s.mu.Lock()
	events := slices.Clone(s.events)
	s.mu.Unlock()
	slices.SortStableFunc(events, func(a, b childEvent) int { return cmp.Compare(a.rv, b.rv) })
	live := map[string]bool{}
	started := false
	for _, ev := range events {
		if ev.owner {
			continue
		}
		if ev.live && ev.ctrl == uid {
			live[ev.name] = true
		} else {
			delete(live, ev.name)
		}
		if !started && len(live) == from {
			started, low, high = true, from, from
		}
		if started {
			low, high = min(low, len(live)), max(high, len(live))
		}
	}
	return low, high
}

// TestDeletionGateWorkerSet runs the WorkerSet example with
// spec.lifecycle.preDelete on a real apiserver, whose CRD keeps the field:
// scaled from 3 to 1, the set marks two Workers and deletes none while the
// gate holds, and releasing one deletes exactly that one.
func TestDeletionGateWorkerSet(t *testing.T) {
	s := newScenario(t, 3*time.Minute)
	require.NoError(t, s.env.InstallCRDsFromYAML(s.ctx, workerset.CRD))
	dyn, err := dynamic.NewForConfig(s.clientConfig(nil))
	require.NoError(t, err)
	sampler := s.workerSetSampler(dyn)
	sets := dyn.Resource(workerset.SetResource).Namespace(s.ns)
	workers := dyn.Resource(workerset.WorkerResource).Namespace(s.ns)

	obj := workerSetObject("drained", "drained", 3)
	require.NoError(t, unstructured.SetNestedField(obj.Object, map[string]any{"label": drainLabel, "timeoutSeconds": int64(600)},
		"spec", "lifecycle", "preDelete"))
	set, err := sets.Create(s.ctx, obj, metav1.CreateOptions{})
	require.NoError(t, err)
	label, _, _ := unstructured.NestedString(set.Object, "spec", "lifecycle", "preDelete", "label")
	require.Equal(t, drainLabel, label, "the CRD's schema keeps spec.lifecycle.preDelete")

	warnings := s.runWorkerSet()
	s.settleChildren(sampler, set.GetUID(), 3)
	before := sampler.liveOf(set.GetUID())
	_, err = sets.Patch(s.ctx, "drained", types.MergePatchType, []byte(`{"spec":{"replicas":1}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	markedWorkers := func() []string {
		list, err := workers.List(s.ctx, metav1.ListOptions{LabelSelector: drainLabel + "=" + childset.DeletionGatePending})
		require.NoError(t, err)
		var names []string
		for _, w := range list.Items {
			names = append(names, w.GetName())
		}
		slices.Sort(names)
		return names
	}
	var victims []string
	s.eventually(time.Minute, "two Workers marked", func() (bool, string) {
		victims = markedWorkers()
		return len(victims) == 2, fmt.Sprintf("marked %v", victims)
	})
	time.Sleep(3 * time.Second)
	assert.Equal(t, before, sampler.liveOf(set.GetUID()), "no Worker deleted while the gate holds")
	assert.Equal(t, victims, markedWorkers(), "the same victims, and no more")

	_, err = workers.Patch(s.ctx, victims[1], types.MergePatchType,
		fmt.Appendf(nil, `{"metadata":{"labels":{%q:"done"}}}`, drainLabel), metav1.PatchOptions{})
	require.NoError(t, err)
	s.settleChildren(sampler, set.GetUID(), 2)
	want := slices.DeleteFunc(slices.Clone(before), func(n string) bool { return n == victims[1] })
	assert.Equal(t, want, sampler.liveOf(set.GetUID()), "only the released Worker is deleted")
	assert.Equal(t, victims[:1], markedWorkers())
	low, high := sampler.liveBounds(set.GetUID(), 3)
	assert.Equal(t, [2]int{2, 3}, [2]int{low, high}, "fewest and most live Workers since the scale-in")
	assert.Empty(t, warnings.list(), "Warning events")
}
