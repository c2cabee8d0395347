package e2e

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/childset"
)

// setSampler is overCreationSampler for children of any kind: it records
// every watched state of the owners (objects of ownerKind, with
// spec.replicas) and of their children, as unstructured objects from
// dynamic informers, and replays them in resourceVersion order. At every
// event that raises an owner's count of live children (not being deleted)
// it checks the count against the owner's spec.replicas at that revision,
// and that no other live child of that owner holds the same index
// (childset.IndexLabel). A scale-down leaves more children than asked for
// until its deletions land, which is not an over-creation, so only raises
// are checked; the bound follows spec.replicas as the owner's events
// change it.
type setSampler struct {
	ownerKind string

	mu     sync.Mutex
	events []setEvent
	lastRV int64
}

type setEvent struct {
	rv       int64
	owner    bool
	name     string
	uid      types.UID // a child's controller, or the owner itself
	live     bool
	index    string
	replicas int64
}

// handler is the informers' event handler for owners and children.
func (s *setSampler) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.record(obj, false) },
		UpdateFunc: func(_, cur any) { s.record(cur, false) },
		DeleteFunc: func(obj any) { s.record(obj, true) },
	}
}

func (s *setSampler) record(obj any, deleted bool) {
	missed := false
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj, missed = tomb.Obj, true
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	ev := setEvent{name: u.GetName()}
	if u.GetKind() == s.ownerKind {
		ev.owner, ev.uid = true, u.GetUID()
		replicas, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		if !found {
			replicas = 1
		}
		ev.replicas = replicas
	} else {
		if ref := metav1.GetControllerOf(u); ref != nil {
			ev.uid = ref.UID
		}
		ev.live = !deleted && u.GetDeletionTimestamp() == nil
		ev.index = u.GetLabels()[childset.IndexLabel]
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := strconv.ParseInt(u.GetResourceVersion(), 10, 64)
	if err != nil || missed {
		// A deletion noticed at a relist carries no revision of its own:
		// placing it last can only overstate the count.
		n = s.lastRV
	}
	ev.rv = n
	s.lastRV = max(s.lastRV, n)
	s.events = append(s.events, ev)
}

// setReport is the replay's result.
type setReport struct {
	Samples     int             // child events that raised an owner's count, each checked
	Controlled  map[string]bool // children ever controlled by an owner
	MaxLive     int             // the most live children an owner held at once
	MaxExcess   int             // the largest count above spec.replicas at a raise; 0 if never
	Violations  []string        // over-creations and indices held twice
	EventsTotal int
}

// replay reconstructs the history in resourceVersion order and checks it.
func (s *setSampler) replay() setReport {
	s.mu.Lock()
	events := slices.Clone(s.events)
	s.mu.Unlock()
	slices.SortStableFunc(events, func(a, b setEvent) int { return cmp.Compare(a.rv, b.rv) })

	rep := setReport{EventsTotal: len(events), Controlled: map[string]bool{}}
	replicas := map[types.UID]int64{}
	type holding struct {
		uid   types.UID
		index string
	}
	held := map[string]holding{}                 // live controlled children
	count := map[types.UID]int{}                 // live children per owner
	holders := map[types.UID]map[string]string{} // owner -> index -> child
	for _, ev := range events {
		if ev.owner {
			replicas[ev.uid] = ev.replicas
			continue
		}
		prev, wasLive := held[ev.name]
		if wasLive {
			count[prev.uid]--
			delete(held, ev.name)
			if prev.index != "" && holders[prev.uid][prev.index] == ev.name {
				delete(holders[prev.uid], prev.index)
			}
		}
		if ev.uid == "" {
			continue
		}
		rep.Controlled[ev.name] = true
		if !ev.live {
			continue
		}
		held[ev.name] = holding{uid: ev.uid, index: ev.index}
		count[ev.uid]++
		if ev.index != "" {
			if holders[ev.uid] == nil {
				holders[ev.uid] = map[string]string{}
			}
			if other, taken := holders[ev.uid][ev.index]; taken && other != ev.name {
				rep.Violations = append(rep.Violations, fmt.Sprintf("rv %d: index %s held by %s and %s", ev.rv, ev.index, other, ev.name))
			}
			holders[ev.uid][ev.index] = ev.name
		}
		if wasLive && prev.uid == ev.uid {
			continue // an update of a child already counted raises nothing
		}
		rep.Samples++
		rep.MaxLive = max(rep.MaxLive, count[ev.uid])
		want, known := replicas[ev.uid]
		if !known {
			continue
		}
		if excess := count[ev.uid] - int(want); excess > 0 {
			rep.MaxExcess = max(rep.MaxExcess, excess)
			rep.Violations = append(rep.Violations, fmt.Sprintf("rv %d: %s made %d live children for %d replicas", ev.rv, ev.name, count[ev.uid], want))
		}
	}
	return rep
}
