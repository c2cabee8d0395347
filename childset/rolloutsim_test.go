package childset

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// The rollout property: whole rollouts over random replicas, bounds,
// partitions and starting states, in a simulated cluster where every
// creation becomes available and every deletion completes after a random
// number of steps, one at a time in a random order. The invariants are
// checked at every instant: after a pass's writes (all of them: any subset
// adds no more children and removes no more available ones) and after each
// single completion.
func TestPlanRolloutSimulated(t *testing.T) {
	trials := 10_000
	if testing.Short() {
		trials = 1000
	}
	for _, indexed := range []bool{false, true} {
		t.Run(fmt.Sprintf("indexed=%v", indexed), func(t *testing.T) {
			var steps, longest int
			for trial := range trials {
				r := rand.New(rand.NewPCG(20261126, uint64(trial)))
				s := newRolloutSim(t, r, indexed)
				n := s.run()
				steps += n
				longest = max(longest, n)
				if t.Failed() {
					t.Fatalf("trial %d: %s", trial, s.describe())
				}
			}
			t.Logf("%d rollouts, %d simulated steps, the longest %d", trials, steps, longest)
		})
	}
}

// simChild is a child of the simulated cluster.
type simChild struct {
	rolloutChild
	id int
}

type rolloutSim struct {
	t       *testing.T
	r       *rand.Rand
	state   rolloutInput // Children is rebuilt before each pass
	update  RollingUpdate
	unavail int // the availability bound the planner keeps (1 at least when indexed)
	keep    int // min(partition, replicas)

	children []simChild
	nextID   int
	initial  []simChild
	log      []string

	// Each invariant holds from the first instant it holds on.
	totalHeld, availableHeld bool
	oldLive                  int
}

func newRolloutSim(t *testing.T, r *rand.Rand, indexed bool) *rolloutSim {
	s := &rolloutSim{t: t, r: r}
	replicas := int32(r.IntN(13))
	if r.IntN(10) == 0 {
		replicas = int32(r.IntN(60))
	}
	for {
		s.update = RollingUpdate{MaxSurge: randFencepost(r), MaxUnavailable: randFencepost(r), Partition: int32(r.IntN(int(replicas) + 3))}
		if r.IntN(3) == 0 {
			s.update.Partition = 0
		}
		if b, err := s.update.Bounds(replicas); err == nil {
			s.state = rolloutInput{Replicas: replicas, Bounds: b, Partition: s.update.Partition, Indexed: indexed}
			break
		}
	}
	s.state.Burst = simOneOf(r, 0, 0, 1, 2, 5)
	s.unavail = int(s.state.Bounds.MaxUnavailable)
	if indexed && replicas > 0 {
		s.unavail = max(s.unavail, 1)
	}
	s.keep = min(int(s.state.Partition), int(replicas))
	s.seed(r)
	s.initial = slices.Clone(s.children)
	s.oldLive = s.countOldLive()
	return s
}

func randFencepost(r *rand.Rand) *intstr.IntOrString {
	switch r.IntN(3) {
	case 0:
		return nil
	case 1:
		v := intstr.FromInt32(int32(r.IntN(4)))
		return &v
	default:
		v := intstr.FromString(simOneOf(r, "0%", "10%", "25%", "33%", "50%", "100%", "150%"))
		return &v
	}
}

func simOneOf[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// seed gives the owner a starting state: mostly old and available
// children, some updated, unavailable or being deleted, fewer or more than
// wanted; in indexed mode at distinct indices, some beyond the wanted ones
// or without one.
func (s *rolloutSim) seed(r *rand.Rand) {
	replicas := int(s.state.Replicas)
	indices := r.Perm(replicas + 3)
	n := r.IntN(replicas + 4)
	for i := range n {
		c := rolloutChild{Index: -1, Updated: r.IntN(5) == 0, Available: r.IntN(5) != 0, Deleting: r.IntN(10) == 0}
		if s.state.Indexed && i < len(indices) && r.IntN(12) != 0 {
			c.Index = indices[i]
		}
		s.add(c)
	}
}

func (s *rolloutSim) add(c rolloutChild) {
	s.children = append(s.children, simChild{rolloutChild: c, id: s.nextID})
	s.nextID++
}

// run drives the rollout to its end and returns the number of steps.
func (s *rolloutSim) run() int {
	s.check("start")
	for step := 1; step <= 10_000; step++ {
		// The controller does not pass at every step, but always when
		// nothing else can happen.
		if s.r.IntN(3) != 0 || !s.pending() {
			if s.pass(step) && !s.pending() {
				s.checkEnd()
				return step
			}
		}
		s.completeSome(step)
		if s.t.Failed() {
			return step
		}
	}
	s.t.Errorf("no convergence after 10000 steps")
	return 10_000
}

// pass plans and performs one pass; it reports whether the plan was empty.
func (s *rolloutSim) pass(step int) bool {
	s.state.Children = s.state.Children[:0]
	for _, c := range s.children {
		s.state.Children = append(s.state.Children, c.rolloutChild)
	}
	plan := planRollout(s.state)
	s.log = append(s.log, fmt.Sprintf("step %d: %s -> %+v", step, s.summary(), plan))
	s.checkPlan(plan)
	for _, i := range plan.Delete {
		s.children[i].Deleting = true
	}
	for range plan.CreateUpdated {
		s.add(rolloutChild{Index: -1, Updated: true})
	}
	for range plan.CreateCurrent {
		s.add(rolloutChild{Index: -1})
	}
	for _, i := range plan.CreateUpdatedIndices {
		s.add(rolloutChild{Index: i, Updated: true})
	}
	for _, i := range plan.CreateCurrentIndices {
		s.add(rolloutChild{Index: i})
	}
	s.check(fmt.Sprintf("after the pass of step %d", step))
	return plan.Empty()
}

// checkPlan checks what a plan may ask: deletions of distinct live
// children, never a kept low index; creations only of free wanted
// indices, at the revision the partition gives them.
func (s *rolloutSim) checkPlan(p rolloutPlan) {
	seen := map[int]bool{}
	for _, i := range p.Delete {
		switch {
		case i < 0 || i >= len(s.children) || seen[i]:
			s.t.Errorf("plan deletes position %d twice or out of range", i)
			return
		case s.children[i].Deleting:
			s.t.Errorf("plan deletes child %d, already being deleted", s.children[i].id)
		case s.state.Indexed && s.children[i].Index >= 0 && s.children[i].Index < s.keep:
			s.t.Errorf("plan deletes child %d at index %d, below the partition %d", s.children[i].id, s.children[i].Index, s.keep)
		}
		seen[i] = true
	}
	if s.state.Indexed && (p.CreateUpdated != 0 || p.CreateCurrent != 0) ||
		!s.state.Indexed && (len(p.CreateUpdatedIndices) != 0 || len(p.CreateCurrentIndices) != 0) {
		s.t.Errorf("plan creates in the other identity mode: %+v", p)
	}
	held := map[int]bool{}
	for _, c := range s.children {
		held[c.Index] = true
	}
	for _, list := range [][]int{p.CreateCurrentIndices, p.CreateUpdatedIndices} {
		for _, i := range list {
			if i < 0 || i >= int(s.state.Replicas) || held[i] {
				s.t.Errorf("plan creates index %d, held or not wanted", i)
			}
			held[i] = true
		}
	}
	for _, i := range p.CreateCurrentIndices {
		if i >= s.keep {
			s.t.Errorf("plan creates index %d at the current revision, partition %d", i, s.keep)
		}
	}
	for _, i := range p.CreateUpdatedIndices {
		if i < s.keep {
			s.t.Errorf("plan creates index %d at the update revision, partition %d", i, s.keep)
		}
	}
}

func (s *rolloutSim) pending() bool {
	return slices.ContainsFunc(s.children, func(c simChild) bool { return c.Deleting || !c.Available })
}

// completeSome lets some pending transitions complete, one at a time in a
// random order: a child becomes available, or a deletion completes.
func (s *rolloutSim) completeSome(step int) {
	ids := make([]int, 0, len(s.children))
	for _, c := range s.children {
		if (c.Deleting || !c.Available) && s.r.IntN(2) == 0 {
			ids = append(ids, c.id)
		}
	}
	s.r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	for _, id := range ids {
		i := slices.IndexFunc(s.children, func(c simChild) bool { return c.id == id })
		if s.children[i].Deleting {
			s.children = slices.Delete(s.children, i, i+1)
		} else {
			s.children[i].Available = true
		}
		s.check(fmt.Sprintf("after a completion at step %d", step))
	}
}

func (s *rolloutSim) countOldLive() int {
	n := 0
	for _, c := range s.children {
		if !c.Deleting && !c.Updated {
			n++
		}
	}
	return n
}

// check asserts the invariants of one instant.
func (s *rolloutSim) check(when string) {
	replicas := int(s.state.Replicas)
	total, available := len(s.children), 0
	for _, c := range s.children {
		if c.Available && !c.Deleting {
			available++
		}
	}
	maxTotal := replicas + int(s.state.Bounds.MaxSurge)
	if s.totalHeld && total > maxTotal {
		s.t.Errorf("%s: %d children, more than %d replicas + %d surge", when, total, replicas, s.state.Bounds.MaxSurge)
	}
	s.totalHeld = s.totalHeld || total <= maxTotal
	minAvailable := replicas - s.unavail
	if s.availableHeld && available < minAvailable {
		s.t.Errorf("%s: %d available, fewer than %d replicas - %d unavailable", when, available, replicas, s.unavail)
	}
	s.availableHeld = s.availableHeld || available >= minAvailable
	if !s.state.Indexed {
		// The old children never fall below the partition, unless they
		// were fewer already, and then they never fall.
		old := s.countOldLive()
		if old < min(s.keep, s.oldLive) {
			s.t.Errorf("%s: %d old children, partition %d, %d before", when, old, s.keep, s.oldLive)
		}
		s.oldLive = old
	}
}

// checkEnd asserts the end of the rollout: the wanted children, all live
// and available, every one beyond the partition updated, and no child
// rolled back.
func (s *rolloutSim) checkEnd() {
	replicas := int(s.state.Replicas)
	if len(s.children) != replicas {
		s.t.Errorf("the rollout ends with %d children, want %d", len(s.children), replicas)
	}
	for _, c := range s.children {
		if c.Deleting || !c.Available {
			s.t.Errorf("the rollout ends with child %d not live and available: %+v", c.id, c)
		}
	}
	if s.state.Indexed {
		s.checkIndexedEnd()
		return
	}
	var oldStart, updatedStart, old int
	for _, c := range s.initial {
		switch {
		case c.Deleting:
		case c.Updated:
			updatedStart++
		default:
			oldStart++
		}
	}
	for _, c := range s.children {
		if !c.Updated {
			old++
		}
	}
	// Partition old children, fewer only if so many children were updated
	// already that keeping them all leaves less room (never a rollback),
	// but no fewer than were old at the start.
	want := min(s.keep, max(oldStart, replicas-min(updatedStart, replicas)))
	if old != want {
		s.t.Errorf("the rollout ends with %d old children, want %d (partition %d, %d old and %d updated at the start)", old, want, s.keep, oldStart, updatedStart)
	}
}

// checkIndexedEnd: each wanted index held once; at or above the
// partition updated; below it, as it started (a child created there is
// at the current revision).
func (s *rolloutSim) checkIndexedEnd() {
	startUpdated := map[int]bool{}
	for _, c := range s.initial {
		if !c.Deleting && c.Updated {
			startUpdated[c.Index] = true
		}
	}
	seen := map[int]bool{}
	for _, c := range s.children {
		switch {
		case c.Index < 0 || c.Index >= int(s.state.Replicas) || seen[c.Index]:
			s.t.Errorf("the rollout ends with child %d at index %d, unwanted or held twice", c.id, c.Index)
		case c.Index >= s.keep && !c.Updated:
			s.t.Errorf("the rollout ends with index %d old, partition %d", c.Index, s.keep)
		case c.Index < s.keep && c.Updated != startUpdated[c.Index]:
			s.t.Errorf("the rollout ends with index %d updated=%v below the partition %d, started updated=%v", c.Index, c.Updated, s.keep, startUpdated[c.Index])
		}
		seen[c.Index] = true
	}
}

func (s *rolloutSim) summary() string {
	var b strings.Builder
	for _, c := range s.children {
		rev := "o"
		if c.Updated {
			rev = "u"
		}
		state := "a"
		switch {
		case c.Deleting:
			state = "d"
		case !c.Available:
			state = "n"
		}
		if s.state.Indexed {
			fmt.Fprintf(&b, "%d", c.Index)
		}
		b.WriteString(rev + state + " ")
	}
	return b.String()
}

func (s *rolloutSim) describe() string {
	log := s.log
	if len(log) > 30 {
		log = log[len(log)-30:]
	}
	return fmt.Sprintf("replicas %d, update %v/%v partition %d, bounds %+v, burst %d, indexed %v\nlast passes:\n%s",
		s.state.Replicas, s.update.MaxSurge, s.update.MaxUnavailable, s.update.Partition, s.state.Bounds, s.state.Burst, s.state.Indexed, strings.Join(log, "\n"))
}
