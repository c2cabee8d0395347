package scenarios

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// childSampler is the over-creation sampler (overcreation_test.go) for
// owners and children of any kind, read through the dynamic client: it
// watches one owner resource and one child resource of the namespace,
// records every event with its resourceVersion, and replays them in that
// order, which is etcd's order of the writes however the two watches
// interleaved on arrival.
//
// As there, only a child event that raises an owner's count of live
// children (children without a deletionTimestamp) is checked, against the
// owner's replicas at that revision: a scale-down leaves more children than
// replicas until its deletions land, which is no excess, while any child
// created or adopted beyond the replicas in force is. The scenarios scale
// down only once their creations have landed.
//
// It also checks what indexed children promise: no name is held by two live
// children (two UIDs) at one revision.
type childSampler struct {
	t          *testing.T
	factory    dynamicinformer.DynamicSharedInformerFactory
	stop       chan struct{}
	ownerKind  string
	replicasOf func(*unstructured.Unstructured) int64

	mu      sync.Mutex
	events  []childEvent
	lastRV  int64
	lastAt  time.Time
	checked bool
}

// childEvent is one watched state of an owner or a child.
type childEvent struct {
	rv    int64
	at    time.Time
	owner bool
	name  string
	uid   types.UID // the object's own
	// A child's controller UID and whether it is live; an owner's replicas.
	ctrl     types.UID
	live     bool
	replicas int64
	deleted  bool
}

// childViolation is one instant at which an owner had more live children
// than its replicas, or a name was held twice.
type childViolation struct {
	what string
	rv   int64
	at   time.Time
}

// childReplay is the replayed history.
type childReplay struct {
	violations []childViolation
	// names holds every child name seen; live the live children per
	// controller UID at the end; created the names whose first event was
	// an addition; peak the largest number of live children each
	// controller UID ever had.
	names   map[string]bool
	live    map[types.UID]map[string]bool
	created map[string]bool
	peak    map[types.UID]int
}

// newChildSampler starts watching owners and children in ns with the
// test's own client. replicasOf gives an owner's desired count (with the
// controller's default for a missing field). The check runs as a cleanup,
// after the scenario's controllers (registered later) have stopped.
func newChildSampler(t *testing.T, dyn dynamic.Interface, ns string, owners, children schema.GroupVersionResource,
	ownerKind string, replicasOf func(*unstructured.Unstructured) int64) *childSampler {
	t.Helper()
	s := &childSampler{
		t:          t,
		factory:    dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, ns, nil),
		stop:       make(chan struct{}),
		ownerKind:  ownerKind,
		replicasOf: replicasOf,
	}
	startDynamic(t, "child sampler", s.factory, s.stop, map[schema.GroupVersionResource]func(any, bool){
		owners:   func(obj any, deleted bool) { s.record(obj, true, deleted) },
		children: func(obj any, deleted bool) { s.record(obj, false, deleted) },
	})
	t.Cleanup(s.finish)
	return s
}

func (s *childSampler) record(obj any, owner, deleted bool) {
	missedDelete := false
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj, missedDelete = tomb.Obj, true
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	ev := childEvent{at: time.Now(), owner: owner, name: u.GetName(), uid: u.GetUID(), deleted: deleted}
	if owner {
		ev.replicas = s.replicasOf(u)
	} else {
		if ref := metav1.GetControllerOfNoCopy(u); ref != nil && ref.Kind == s.ownerKind {
			ev.ctrl = ref.UID
		}
		ev.live = !deleted && u.GetDeletionTimestamp() == nil
	}
	rv, err := strconv.ParseInt(u.GetResourceVersion(), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || missedDelete {
		// Without a revision of its own the event goes after everything seen.
		rv = s.lastRV
	}
	ev.rv = rv
	s.lastRV = max(s.lastRV, rv)
	s.lastAt = ev.at
	s.events = append(s.events, ev)
}

// replay rebuilds the history in revision order.
func (s *childSampler) replay() childReplay {
	s.mu.Lock()
	events := slices.Clone(s.events)
	s.mu.Unlock()
	slices.SortStableFunc(events, func(a, b childEvent) int { return cmp.Compare(a.rv, b.rv) })

	type ownerState struct {
		name     string
		replicas int64
	}
	owners := map[types.UID]ownerState{}
	liveUID := map[string]types.UID{}  // name -> UID of its live child
	liveCtrl := map[string]types.UID{} // name -> controller of its live child
	out := childReplay{names: map[string]bool{}, live: map[types.UID]map[string]bool{}, created: map[string]bool{}, peak: map[types.UID]int{}}
	for _, ev := range events {
		if ev.owner {
			if ev.deleted {
				delete(owners, ev.uid)
			} else {
				owners[ev.uid] = ownerState{name: ev.name, replicas: ev.replicas}
			}
			continue
		}
		if !out.names[ev.name] && ev.live {
			out.created[ev.name] = true
		}
		out.names[ev.name] = true
		if holder, held := liveUID[ev.name]; held && holder != ev.uid && ev.live {
			out.violations = append(out.violations, childViolation{rv: ev.rv, at: ev.at,
				what: fmt.Sprintf("child %s held by two live objects (UIDs %s and %s)", ev.name, holder, ev.uid)})
		}
		prevCtrl, wasLive := liveCtrl[ev.name]
		if wasLive && liveUID[ev.name] == ev.uid {
			delete(out.live[prevCtrl], ev.name)
			delete(liveCtrl, ev.name)
			delete(liveUID, ev.name)
		}
		if !ev.live {
			continue
		}
		liveUID[ev.name], liveCtrl[ev.name] = ev.uid, ev.ctrl
		if ev.ctrl == "" {
			continue
		}
		if out.live[ev.ctrl] == nil {
			out.live[ev.ctrl] = map[string]bool{}
		}
		out.live[ev.ctrl][ev.name] = true
		out.peak[ev.ctrl] = max(out.peak[ev.ctrl], len(out.live[ev.ctrl]))
		if wasLive && prevCtrl == ev.ctrl {
			continue // an update that did not change the count
		}
		if o, known := owners[ev.ctrl]; known && int64(len(out.live[ev.ctrl])) > o.replicas {
			out.violations = append(out.violations, childViolation{rv: ev.rv, at: ev.at,
				what: fmt.Sprintf("%s %s had %d live children for replicas %d (child %s)",
					s.ownerKind, o.name, len(out.live[ev.ctrl]), o.replicas, ev.name)})
		}
	}
	return out
}

// liveOf returns the names of the live children of the owner uid, sorted.
func (s *childSampler) liveOf(uid types.UID) []string {
	names := make([]string, 0)
	for n := range s.replay().live[uid] {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// quietFor reports how long no event has arrived.
func (s *childSampler) quietFor() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Since(s.lastAt)
}

// finish stops the watches and fails the test for every violation.
func (s *childSampler) finish() {
	s.mu.Lock()
	if s.checked {
		s.mu.Unlock()
		return
	}
	s.checked = true
	n := len(s.events)
	s.mu.Unlock()
	close(s.stop)
	s.factory.Shutdown()
	r := s.replay()
	for i, v := range r.violations {
		if i == 10 {
			s.t.Errorf("child sampler: %d more violations", len(r.violations)-i)
			break
		}
		s.t.Errorf("child sampler: %s at resourceVersion %d (%s)", v.what, v.rv, v.at.Format("15:04:05.000"))
	}
	s.t.Logf("child sampler: %d events replayed, %d children seen", n, len(r.names))
}

// settleChildren waits until the sampler's watch shows n live children of
// the owner uid and no event has arrived for a second, so a late excess
// would be seen by the checks that follow.
func (s *scenario) settleChildren(sampler *childSampler, uid types.UID, n int) {
	s.t.Helper()
	s.eventually(time.Minute, fmt.Sprintf("%d live children, then a quiet second", n), func() (bool, string) {
		live := sampler.liveOf(uid)
		quiet := sampler.quietFor()
		return len(live) == n && quiet >= time.Second, fmt.Sprintf("%d live, quiet for %s", len(live), quiet.Round(time.Millisecond))
	})
}
