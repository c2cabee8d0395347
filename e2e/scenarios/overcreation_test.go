package scenarios

import (
	"cmp"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// overCreationSampler checks the invariant every scenario shares: no
// ReplicaSet or ReplicationController ever owns more non-terminating pods
// than the spec.replicas in force at that instant.
//
// It watches the namespace's pods and owners (through informers, which
// resume and relist by themselves across apiserver restarts and expired
// watches) and records every event with its resourceVersion. etcd gives each
// write a distinct, increasing revision, and the apiserver uses it as the
// resourceVersion, so replaying the events of both watches in that order
// reconstructs the history exactly, however the two streams interleaved on
// arrival: a pod created just after a scale-up is never compared with the
// replicas from before it.
//
// Only a pod event that raises an owner's count is checked against the spec
// at that revision. A scale-down leaves more pods than spec.replicas until
// the deletions land, which is not an over-creation. Pods that come from
// adoption rather than creation count like any other; a scenario that adopts
// a surplus orphan says so with allow.
//
// The spec in force is the apiserver's, not the one the controller had seen:
// a create decided from a cache that predates a scale-down can land after
// it, and counts as an excess. Scenarios therefore scale down only once
// their creates have landed.
//
// One caveat: after a relist, an informer reports a deletion it missed with
// no revision; the sampler then places it at the latest revision seen, which
// can only overstate the count. The scenarios run on watches that never
// expire (the watch-expiry scenario cuts only the controller's watches), so
// it does not arise there.
type overCreationSampler struct {
	t       *testing.T
	factory informers.SharedInformerFactory
	stop    chan struct{}

	mu      sync.Mutex
	events  []sampledEvent
	lastRV  int64
	allowed map[string]allowance // by owner name
	checked bool
}

type allowance struct {
	extra int
	why   string
}

// sampledEvent is one watched state of a pod or an owner.
type sampledEvent struct {
	rv   int64
	at   time.Time
	kind string // "pod", "ReplicaSet" or "ReplicationController"
	name string
	// For a pod: its controller's UID and whether it is active. For an
	// owner: its UID and desired replicas.
	uid      types.UID
	active   bool
	replicas int32
	deleted  bool
}

// violation is one instant at which an owner had more pods than desired.
type violation struct {
	owner          string
	pods, replicas int
	rv             int64
	at             time.Time
	pod            string
}

// newOverCreationSampler starts watching the namespace with the test's own
// admin client. Its check runs as a cleanup, after the scenario's controllers
// (registered later) have stopped.
func newOverCreationSampler(t *testing.T, client kubernetes.Interface, ns string) *overCreationSampler {
	t.Helper()
	s := &overCreationSampler{
		t:       t,
		factory: informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns)),
		stop:    make(chan struct{}),
		allowed: map[string]allowance{},
	}
	for _, inf := range []cache.SharedIndexInformer{
		s.factory.Core().V1().Pods().Informer(),
		s.factory.Apps().V1().ReplicaSets().Informer(),
		s.factory.Core().V1().ReplicationControllers().Informer(),
	} {
		onEvents(t, "over-creation sampler", inf, s.record)
	}
	s.factory.Start(s.stop)
	t.Cleanup(s.finish)
	return s
}

// allow documents that owner may legitimately exceed its replicas by up to
// extra pods, and why; the excess is still logged.
func (s *overCreationSampler) allow(owner string, extra int, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.allowed[owner] = allowance{extra: extra, why: why}
}

func (s *overCreationSampler) record(obj any, deleted bool) {
	missedDelete := false
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj, missedDelete = tomb.Obj, true
	}
	ev := sampledEvent{at: time.Now(), deleted: deleted}
	var rvString string
	switch o := obj.(type) {
	case *corev1.Pod:
		ev.kind, ev.name, rvString = "pod", o.Name, o.ResourceVersion
		if ref := metav1.GetControllerOf(o); ref != nil {
			ev.uid = ref.UID
		}
		ev.active = !deleted && o.DeletionTimestamp == nil && o.Status.Phase != corev1.PodSucceeded && o.Status.Phase != corev1.PodFailed
	case *appsv1.ReplicaSet:
		ev.kind, ev.name, ev.uid, rvString = "ReplicaSet", o.Name, o.UID, o.ResourceVersion
		ev.replicas = replicasOrDefault(o.Spec.Replicas)
	case *corev1.ReplicationController:
		ev.kind, ev.name, ev.uid, rvString = "ReplicationController", o.Name, o.UID, o.ResourceVersion
		ev.replicas = replicasOrDefault(o.Spec.Replicas)
	default:
		return
	}
	rv, err := strconv.ParseInt(rvString, 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || missedDelete {
		// Without a revision of its own the event goes after everything seen.
		rv = s.lastRV
	}
	ev.rv = rv
	s.lastRV = max(s.lastRV, rv)
	s.events = append(s.events, ev)
}

// replicasOrDefault is the apiserver's default for a nil spec.replicas.
func replicasOrDefault(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

// replay rebuilds the history in revision order and returns every instant at
// which a pod event left an owner with more active pods than its replicas,
// and the largest excess seen per owner name.
func (s *overCreationSampler) replay() ([]violation, map[string]int) {
	s.mu.Lock()
	events := append([]sampledEvent(nil), s.events...)
	s.mu.Unlock()
	slices.SortStableFunc(events, func(a, b sampledEvent) int { return cmp.Compare(a.rv, b.rv) })

	type ownerState struct {
		name     string
		replicas int32
	}
	owners := map[types.UID]ownerState{}
	podOwner := map[string]types.UID{} // active pods only
	count := map[types.UID]int{}
	peak := map[string]int{}
	var out []violation
	for _, ev := range events {
		if ev.kind != "pod" {
			if ev.deleted {
				delete(owners, ev.uid)
			} else {
				owners[ev.uid] = ownerState{name: ev.kind + "/" + ev.name, replicas: ev.replicas}
			}
			continue
		}
		prev, wasActive := podOwner[ev.name]
		if wasActive {
			count[prev]--
			delete(podOwner, ev.name)
		}
		if !ev.active || ev.uid == "" {
			continue
		}
		podOwner[ev.name] = ev.uid
		count[ev.uid]++
		if wasActive && prev == ev.uid {
			continue // an update that did not change the count
		}
		o, known := owners[ev.uid]
		if !known {
			continue
		}
		if excess := count[ev.uid] - int(o.replicas); excess > 0 {
			peak[o.name] = max(peak[o.name], excess)
			out = append(out, violation{owner: o.name, pods: count[ev.uid], replicas: int(o.replicas), rv: ev.rv, at: ev.at, pod: ev.name})
		}
	}
	return out, peak
}

// eventCount is how many events of the kind ("pod", "ReplicaSet") arrived.
func (s *overCreationSampler) eventCount(kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, ev := range s.events {
		if ev.kind == kind {
			n++
		}
	}
	return n
}

// peakExcess is the largest number of pods by which the named owner
// ("ReplicaSet/web") exceeded its replicas so far.
func (s *overCreationSampler) peakExcess(owner string) int {
	_, peak := s.replay()
	return peak[owner]
}

// finish stops the watches and fails the test for every excess that no
// allowance covers.
func (s *overCreationSampler) finish() {
	s.mu.Lock()
	if s.checked {
		s.mu.Unlock()
		return
	}
	s.checked = true
	s.mu.Unlock()
	close(s.stop)
	s.factory.Shutdown()

	violations, peak := s.replay()
	s.mu.Lock()
	allowed := s.allowed
	n := len(s.events)
	s.mu.Unlock()
	reported := map[string]int{}
	for _, v := range violations {
		a := allowed[trimKind(v.owner)]
		if v.pods-v.replicas <= a.extra {
			continue
		}
		if reported[v.owner]++; reported[v.owner] > 5 {
			continue
		}
		s.t.Errorf("over-creation: %s had %d non-terminating pods for spec.replicas %d at resourceVersion %d (%s, pod %s)",
			v.owner, v.pods, v.replicas, v.rv, v.at.Format("15:04:05.000"), v.pod)
	}
	for owner, excess := range peak {
		if a, ok := allowed[trimKind(owner)]; ok {
			s.t.Logf("over-creation sampler: %s exceeded its replicas by up to %d (allowed %d: %s)", owner, excess, a.extra, a.why)
		}
	}
	s.t.Logf("over-creation sampler: %d events replayed", n)
}

// trimKind turns "ReplicaSet/web" into "web", the name allow is given.
func trimKind(owner string) string {
	for i := range owner {
		if owner[i] == '/' {
			return owner[i+1:]
		}
	}
	return owner
}
