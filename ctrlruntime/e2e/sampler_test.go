package e2e

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// overCreationSampler records every watched state of the namespace's pods
// and PodGroups with its resourceVersion. etcd gives each write a distinct,
// increasing revision, which the apiserver uses as the resourceVersion, so
// replaying both streams in that order reconstructs the history however
// they interleaved on arrival. At every pod event that raises a group's
// count of non-terminating pods, the count is compared with the group's
// spec.replicas at that revision: a scale-down leaves more pods than asked
// for until the deletions land, which is not an over-creation, so only
// raises are checked. Each check is one sample.
//
// The scenario scales down only once its creations have landed, so the spec
// in force at a pod's revision is the one the controller acted on.
type overCreationSampler struct {
	mu     sync.Mutex
	events []sampledEvent
	lastRV int64
}

type sampledEvent struct {
	rv       int64
	pod      bool
	name     string
	uid      types.UID // a pod's controller, or the group itself
	active   bool
	replicas int64
}

// handler is the informers' event handler for pods and PodGroups.
func (s *overCreationSampler) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.record(obj, false) },
		UpdateFunc: func(_, cur any) { s.record(cur, false) },
		DeleteFunc: func(obj any) { s.record(obj, true) },
	}
}

func (s *overCreationSampler) record(obj any, deleted bool) {
	missed := false
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj, missed = tomb.Obj, true
	}
	var ev sampledEvent
	var rv string
	switch o := obj.(type) {
	case *corev1.Pod:
		ev = sampledEvent{pod: true, name: o.Name}
		if ref := metav1.GetControllerOf(o); ref != nil {
			ev.uid = ref.UID
		}
		ev.active = !deleted && o.DeletionTimestamp == nil && o.Status.Phase != corev1.PodSucceeded && o.Status.Phase != corev1.PodFailed
		rv = o.ResourceVersion
	case *unstructured.Unstructured:
		ev = sampledEvent{name: o.GetName(), uid: o.GetUID()}
		replicas, found, _ := unstructured.NestedInt64(o.Object, "spec", "replicas")
		if !found {
			replicas = 1
		}
		ev.replicas = replicas
		rv = o.GetResourceVersion()
	default:
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || missed {
		// A deletion noticed at a relist carries no revision of its own:
		// placing it last can only overstate the count.
		n = s.lastRV
	}
	ev.rv = n
	s.lastRV = max(s.lastRV, n)
	s.events = append(s.events, ev)
}

// overCreationReport is the replay's result.
type overCreationReport struct {
	Samples     int // pod events that raised a group's count, each checked
	Created     int // distinct pods ever controlled by a group
	MaxActive   int // the most non-terminating pods a group held at once
	MaxExcess   int // the largest count above spec.replicas at a raise; 0 if never
	Violations  []string
	EventsTotal int
}

// replay reconstructs the history in resourceVersion order and checks it.
func (s *overCreationSampler) replay() overCreationReport {
	s.mu.Lock()
	events := slices.Clone(s.events)
	s.mu.Unlock()
	// A stable sort keeps the arrival order of events of equal revision.
	slices.SortStableFunc(events, func(a, b sampledEvent) int { return cmp.Compare(a.rv, b.rv) })

	rep := overCreationReport{EventsTotal: len(events)}
	replicas := map[types.UID]int64{}
	podOwner := map[string]types.UID{} // active pods only
	count := map[types.UID]int{}
	created := map[string]bool{}
	for _, ev := range events {
		if !ev.pod {
			replicas[ev.uid] = ev.replicas
			continue
		}
		prev, wasActive := podOwner[ev.name]
		if wasActive {
			count[prev]--
			delete(podOwner, ev.name)
		}
		if ev.uid == "" {
			continue
		}
		created[ev.name] = true
		if !ev.active {
			continue
		}
		podOwner[ev.name] = ev.uid
		count[ev.uid]++
		if wasActive && prev == ev.uid {
			continue // an update of a pod already counted raises nothing
		}
		rep.Samples++
		rep.MaxActive = max(rep.MaxActive, count[ev.uid])
		want, known := replicas[ev.uid]
		if !known {
			continue // a pod of a group this namespace never showed
		}
		if excess := count[ev.uid] - int(want); excess > 0 {
			rep.MaxExcess = max(rep.MaxExcess, excess)
			rep.Violations = append(rep.Violations, fmt.Sprintf("rv %d: pod %s made %d active pods for %d replicas", ev.rv, ev.name, count[ev.uid], want))
		}
	}
	rep.Created = len(created)
	return rep
}

// errGiveUp, wrapped in cond's error, makes waitFor return at once.
var errGiveUp = errors.New("no point waiting")

// waitFor polls cond every 100ms until it holds, it gives up, or timeout
// passes.
func waitFor(timeout time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		if errors.Is(err, errGiveUp) {
			return err
		}
		if time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("timed out after %s: %w", timeout, err)
			}
			return fmt.Errorf("timed out after %s", timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
