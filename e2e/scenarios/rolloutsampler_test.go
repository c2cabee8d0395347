package scenarios

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
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

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/history"
)

// rolloutSampler watches one rolling owner, its children and its
// ControllerRevisions, and replays every event in resourceVersion order
// (etcd's order of the writes) to check each instant of a rolling update:
//
//   - children (being deleted included) ≤ replicas + maxSurge;
//   - available children (live, ready for minReadySeconds at the instant
//     the event arrived) ≥ replicas − maxUnavailable, with the bounds of
//     the owner's spec in force at that instant;
//   - the partition: while spec.strategy.rollingUpdate.partition is P > 0,
//     at least P live children stay at the revision the test named (see
//     holdPartition), and in indexed mode every live child of an index
//     below P is at it;
//   - in indexed mode, no index is ever held by two children.
//
// Checks start at the instant the test names (checkFrom): the first
// creation of the children is no rollout.
type rolloutSampler struct {
	t       *testing.T
	factory dynamicinformer.DynamicSharedInformerFactory
	stop    chan struct{}
	owner   string // the owner's name; one owner per sampler
	kind    string
	indexed bool
	readyOf func(*unstructured.Unstructured) (bool, time.Time)

	mu        sync.Mutex
	events    []rolloutEvent
	lastRV    int64
	checkFrom int64 // 0: not yet
	phases    []phaseMark
	held      string // the hash holdPartition named
	checked   bool
}

type eventSource int

const (
	fromOwner eventSource = iota
	fromChild
	fromRevision
)

type rolloutEvent struct {
	source  eventSource
	rv      int64
	at      time.Time
	name    string
	uid     types.UID
	deleted bool
	err     string // an owner spec the sampler could not read
	// The owner's.
	replicas  int32
	bounds    childset.RolloutBounds
	partition int32
	minReady  time.Duration
	// A child's or a revision's.
	ctrl types.UID
	// A child's.
	terminating bool
	hash        string
	index       int
	ready       bool
	readySince  time.Time
	// A revision's number.
	revision int64
}

// phaseMark names the instants from rv on, for the figures.
type phaseMark struct {
	rv   int64
	name string
}

// phaseFigures are the figures of one phase's checked instants.
type phaseFigures struct {
	name                        string
	samples, maxTotal, minAvail int
}

// rolloutReplay is what the replay found.
type rolloutReplay struct {
	violations []string
	samples    int // instants checked
	maxTotal   int
	minAvail   int
	phases     []phaseFigures
	// At the end: the live children by name, with their hash, and the
	// owner's revisions by name, with their number.
	live      map[string]string
	revisions map[string]int64
	// seen holds the name of every child the owner ever controlled.
	seen map[string]bool
}

func newRolloutSampler(t *testing.T, dyn dynamic.Interface, ns, owner, kind string, owners, children schema.GroupVersionResource,
	indexed bool, readyOf func(*unstructured.Unstructured) (bool, time.Time)) *rolloutSampler {
	t.Helper()
	s := &rolloutSampler{
		t: t, factory: dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, ns, nil), stop: make(chan struct{}),
		owner: owner, kind: kind, indexed: indexed, readyOf: readyOf,
	}
	revisions := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"}
	record := map[schema.GroupVersionResource]func(any, bool){}
	for gvr, src := range map[schema.GroupVersionResource]eventSource{owners: fromOwner, children: fromChild, revisions: fromRevision} {
		record[gvr] = func(obj any, deleted bool) { s.record(obj, src, deleted) }
	}
	startDynamic(t, "rollout sampler", s.factory, s.stop, record)
	t.Cleanup(s.finish)
	return s
}

func (s *rolloutSampler) record(obj any, src eventSource, deleted bool) {
	missed := false
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj, missed = tomb.Obj, true
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	ev := rolloutEvent{source: src, at: time.Now(), name: u.GetName(), uid: u.GetUID(), deleted: deleted}
	if ref := metav1.GetControllerOfNoCopy(u); ref != nil && ref.Kind == s.kind && ref.Name == s.owner {
		ev.ctrl = ref.UID
	}
	switch src {
	case fromOwner:
		if u.GetName() != s.owner {
			return
		}
		ev.err = s.readOwner(u, &ev)
	case fromChild:
		ev.terminating = u.GetDeletionTimestamp() != nil
		ev.hash = u.GetLabels()[history.ControllerRevisionHashLabel]
		ev.index = -1
		if i, err := strconv.Atoi(u.GetLabels()[childset.IndexLabel]); err == nil {
			ev.index = i
		}
		ev.ready, ev.readySince = s.readyOf(u)
	case fromRevision:
		ev.revision, _, _ = unstructured.NestedInt64(u.Object, "revision")
	}
	rv, err := strconv.ParseInt(u.GetResourceVersion(), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || missed {
		rv = s.lastRV
	}
	ev.rv = rv
	s.lastRV = max(s.lastRV, rv)
	s.events = append(s.events, ev)
}

// readOwner fills the owner's bounds in ev, as the controller resolves
// them; in indexed mode maxUnavailable counts as at least 1 (see
// childset's indexed rollouts: an index is replaced in place, so it must be
// unavailable for a moment).
func (s *rolloutSampler) readOwner(u *unstructured.Unstructured, ev *rolloutEvent) string {
	replicas, err := childset.NestedReplicas(u.Object, 1, "spec", "replicas")
	if err != nil {
		return err.Error()
	}
	ru, err := childset.NestedRollingUpdate(u.Object, "spec", "strategy", "rollingUpdate")
	if err != nil {
		return err.Error()
	}
	b, err := ru.Bounds(replicas)
	if err != nil {
		return err.Error()
	}
	if s.indexed && replicas > 0 {
		b.MaxUnavailable = max(b.MaxUnavailable, 1)
	}
	minReady, err := childset.NestedReplicas(u.Object, 0, "spec", "minReadySeconds")
	if err != nil {
		return err.Error()
	}
	ev.replicas, ev.bounds, ev.partition, ev.minReady = replicas, b, ru.Partition, time.Duration(minReady)*time.Second
	return ""
}

// startPhase makes the replay check every instant from now on, and
// counts the figures of the instants from now on under name.
func (s *rolloutSampler) startPhase(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.checkFrom == 0 {
		s.checkFrom = s.lastRV + 1
	}
	s.phases = append(s.phases, phaseMark{rv: s.lastRV + 1, name: name})
}

// holdPartition names the revision hash a partition keeps children at.
func (s *rolloutSampler) holdPartition(hash string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = hash
}

func (s *rolloutSampler) replay() rolloutReplay {
	s.mu.Lock()
	events := slices.Clone(s.events)
	from, held, marks := s.checkFrom, s.held, slices.Clone(s.phases)
	s.mu.Unlock()
	slices.SortStableFunc(events, func(a, b rolloutEvent) int { return cmp.Compare(a.rv, b.rv) })

	var owner *rolloutEvent
	children := map[types.UID]rolloutEvent{} // the owner's, not yet gone
	out := rolloutReplay{minAvail: -1, live: map[string]string{}, revisions: map[string]int64{}, seen: map[string]bool{}}
	for _, m := range marks {
		out.phases = append(out.phases, phaseFigures{name: m.name, minAvail: -1})
	}
	for i := range events {
		ev := events[i]
		switch ev.source {
		case fromOwner:
			if !ev.deleted {
				owner = &events[i]
			}
		case fromRevision:
			if ev.deleted || ev.ctrl == "" {
				delete(out.revisions, ev.name)
			} else {
				out.revisions[ev.name] = ev.revision
			}
		case fromChild:
			if ev.deleted || ev.ctrl == "" {
				delete(children, ev.uid)
			} else {
				children[ev.uid] = ev
				out.seen[ev.name] = true
			}
		}
		if from == 0 || ev.rv < from || owner == nil {
			continue
		}
		if owner.err != "" {
			out.violations = append(out.violations, fmt.Sprintf("rv %d: the owner's spec: %s", ev.rv, owner.err))
			continue
		}
		out.samples++
		total, avail, atHeld := len(children), 0, 0
		holders := map[int]int{}
		for _, c := range children {
			if !c.terminating && c.ready && !c.readySince.IsZero() && !c.readySince.Add(owner.minReady).After(ev.at) {
				avail++
			}
			if !c.terminating && c.hash == held {
				atHeld++
			}
			if c.index >= 0 {
				holders[c.index]++
				if s.indexed && owner.partition > 0 && held != "" && c.index < int(owner.partition) && !c.terminating && c.hash != held {
					out.violations = append(out.violations, fmt.Sprintf("rv %d: %s (index %d, below partition %d) is at %s, not %s",
						ev.rv, c.name, c.index, owner.partition, c.hash, held))
				}
			}
		}
		out.maxTotal = max(out.maxTotal, total)
		if out.minAvail < 0 || avail < out.minAvail {
			out.minAvail = avail
		}
		if p := phaseAt(marks, ev.rv); p >= 0 {
			f := &out.phases[p]
			f.samples++
			f.maxTotal = max(f.maxTotal, total)
			if f.minAvail < 0 || avail < f.minAvail {
				f.minAvail = avail
			}
		}
		if limit := int(owner.replicas + owner.bounds.MaxSurge); total > limit {
			out.violations = append(out.violations, fmt.Sprintf("rv %d: %d children > replicas %d + maxSurge %d",
				ev.rv, total, owner.replicas, owner.bounds.MaxSurge))
		}
		if floor := int(owner.replicas - owner.bounds.MaxUnavailable); avail < floor {
			out.violations = append(out.violations, fmt.Sprintf("rv %d: %d available < replicas %d - maxUnavailable %d",
				ev.rv, avail, owner.replicas, owner.bounds.MaxUnavailable))
		}
		if !s.indexed && owner.partition > 0 && held != "" && atHeld < int(owner.partition) {
			out.violations = append(out.violations, fmt.Sprintf("rv %d: %d children at %s < partition %d",
				ev.rv, atHeld, held, owner.partition))
		}
		if s.indexed {
			for index, n := range holders {
				if n > 1 {
					out.violations = append(out.violations, fmt.Sprintf("rv %d: index %d held by %d children", ev.rv, index, n))
				}
			}
		}
	}
	for _, c := range children {
		if !c.terminating {
			out.live[c.name] = c.hash
		}
	}
	return out
}

// finish stops the watches and fails the test for every violation.
func (s *rolloutSampler) finish() {
	s.mu.Lock()
	if s.checked {
		s.mu.Unlock()
		return
	}
	s.checked = true
	s.mu.Unlock()
	close(s.stop)
	s.factory.Shutdown()
	r := s.replay()
	for i, v := range r.violations {
		if i == 10 {
			s.t.Errorf("rollout sampler: %d more violations", len(r.violations)-i)
			break
		}
		s.t.Errorf("rollout sampler: %s", v)
	}
	s.t.Logf("rollout sampler: %d instants checked, max children %d, min available %d", r.samples, r.maxTotal, r.minAvail)
	for _, f := range r.phases {
		s.t.Logf("rollout sampler: phase %q: %d instants, max children %d, min available %d", f.name, f.samples, f.maxTotal, f.minAvail)
	}
}

// phaseAt is the index of the last mark at or before rv, -1 if none.
func phaseAt(marks []phaseMark, rv int64) int {
	at := -1
	for i, m := range marks {
		if m.rv <= rv {
			at = i
		}
	}
	return at
}

// settleRollout waits until the replay shows n live children, all at the
// update revision (the owner's newest), which is not the revision hash
// previous, and returns that revision's hash.
func (s *scenario) settleRollout(r *rolloutSampler, n int, previous, what string) string {
	s.t.Helper()
	var hash string
	s.eventually(time.Minute, what, func() (bool, string) {
		rep := r.replay()
		newest, number := "", int64(-1)
		for name, rev := range rep.revisions {
			if rev > number {
				newest, number = name, rev
			}
		}
		hash = newest[strings.LastIndexByte(newest, '-')+1:]
		at := 0
		for _, h := range rep.live {
			if h == hash {
				at++
			}
		}
		return len(rep.live) == n && at == n && newest != "" && hash != previous, fmt.Sprintf("%d live, %d at %s", len(rep.live), at, newest)
	})
	return hash
}
