package parity

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/sets"
	upstream "k8s.io/kubernetes/pkg/controller"
	clocktesting "k8s.io/utils/clock/testing"
)

// expOp is one step of an expectations sequence.
type expOp struct {
	kind     string
	key      string
	add, del int
	depKeys  []string // tracker ExpectDeletions
	depKey   string   // tracker DeletionObserved
	nilSlice bool
}

func (o expOp) String() string {
	switch o.kind {
	case "Set", "Raise", "Lower":
		return fmt.Sprintf("%s(%q, %d, %d)", o.kind, o.key, o.add, o.del)
	case "ExpectCreations":
		return fmt.Sprintf("ExpectCreations(%q, %d)", o.key, o.add)
	case "ExpectDeletionsCount":
		return fmt.Sprintf("inner.ExpectDeletions(%q, %d)", o.key, o.del)
	case "ExpectDeletionsKeys":
		if o.nilSlice {
			return fmt.Sprintf("ExpectDeletions(%q, nil)", o.key)
		}
		return fmt.Sprintf("ExpectDeletions(%q, %q)", o.key, o.depKeys)
	case "DeletionObservedKey":
		return fmt.Sprintf("DeletionObserved(%q, %q)", o.key, o.depKey)
	case "InnerDelete":
		return fmt.Sprintf("inner.DeleteExpectations(%q)", o.key)
	case "Expire":
		return "clock steps past the TTL"
	default:
		return fmt.Sprintf("%s(%q)", o.kind, o.key)
	}
}

var (
	expKeys = []string{"ns/a", "ns/b", "other/a", ""}
	depKeys = []string{"ns/p0", "ns/p1", "ns/p2", "ns/p3"}
)

// genExpOps generates a random operation sequence. tracking adds the
// UIDTrackingControllerExpectations operations. Upstream reads the real
// clock, so its records never expire during the test; an Expire step moves
// only ctrlkit's fake clock past the TTL, and the test models on the
// upstream side what ctrlkit's eviction does then (see expPair.apply).
func genExpOps(r *rand.Rand, tracking bool) []expOp {
	n := 1 + r.IntN(30)
	ops := make([]expOp, 0, n)
	kinds := []string{"Set", "ExpectCreations", "ExpectDeletionsCount", "CreationObserved", "DeletionObserved", "Raise", "Lower", "Delete"}
	if tracking {
		kinds = append(kinds, "ExpectDeletionsKeys", "ExpectDeletionsKeys", "DeletionObservedKey", "DeletionObservedKey", "DeletionObservedKey")
	}
	count := func() int { return r.IntN(7) - 2 } // -2..4: negative counts are legal upstream
	for range n {
		o := expOp{kind: oneOf(r, kinds...), key: expKeys[r.IntN(len(expKeys))]}
		switch {
		case r.IntN(40) == 0:
			o.kind = "Expire"
		case tracking && r.IntN(15) == 0:
			o.kind = "InnerDelete"
		}
		switch o.kind {
		case "Set", "Raise", "Lower":
			o.add, o.del = count(), count()
		case "ExpectCreations":
			o.add = count()
		case "ExpectDeletionsCount":
			o.del = count()
		case "ExpectDeletionsKeys":
			if r.IntN(8) == 0 {
				o.nilSlice = true
			} else {
				for range r.IntN(5) {
					o.depKeys = append(o.depKeys, depKeys[r.IntN(len(depKeys))]) // duplicates on purpose
				}
			}
		case "DeletionObservedKey":
			o.depKey = depKeys[r.IntN(len(depKeys))]
		}
		ops = append(ops, o)
	}
	return ops
}

// expPair holds the two implementations side by side.
type expPair struct {
	upInner *upstream.ControllerExpectations
	upTrack *upstream.UIDTrackingControllerExpectations
	ckInner *expectations.ControllerExpectations
	ckTrack *expectations.UIDTrackingControllerExpectations
	ckClock *clocktesting.FakeClock
}

var discard = logr.Discard() // the "Clobbering existing delete keys" errors are expected here

func newExpPair() *expPair {
	clk := clocktesting.NewFakeClock(time.Now())
	p := &expPair{
		upInner: upstream.NewControllerExpectations(),
		ckInner: expectations.NewControllerExpectations(expectations.WithClock(clk), expectations.WithLogger(discard)),
		ckClock: clk,
	}
	p.upTrack = upstream.NewUIDTrackingControllerExpectations(p.upInner)
	p.ckTrack = expectations.NewUIDTrackingControllerExpectations(p.ckInner)
	return p
}

// apply runs op on both sides and returns a mismatch in the returned errors.
func (p *expPair) apply(o expOp, tracking bool) string {
	var upErr, ckErr error
	lg := discard
	switch o.kind {
	case "Set":
		if tracking {
			upErr, ckErr = p.upTrack.SetExpectations(lg, o.key, o.add, o.del), p.ckTrack.SetExpectations(o.key, o.add, o.del)
		} else {
			upErr, ckErr = p.upInner.SetExpectations(lg, o.key, o.add, o.del), p.ckInner.SetExpectations(o.key, o.add, o.del)
		}
	case "ExpectCreations":
		if tracking {
			upErr, ckErr = p.upTrack.ExpectCreations(lg, o.key, o.add), p.ckTrack.ExpectCreations(o.key, o.add)
		} else {
			upErr, ckErr = p.upInner.ExpectCreations(lg, o.key, o.add), p.ckInner.ExpectCreations(o.key, o.add)
		}
	case "ExpectDeletionsCount":
		upErr, ckErr = p.upInner.ExpectDeletions(lg, o.key, o.del), p.ckInner.ExpectDeletions(o.key, o.del)
	case "CreationObserved":
		if tracking {
			p.upTrack.CreationObserved(lg, o.key)
			p.ckTrack.CreationObserved(o.key)
		} else {
			p.upInner.CreationObserved(lg, o.key)
			p.ckInner.CreationObserved(o.key)
		}
	case "DeletionObserved":
		p.upInner.DeletionObserved(lg, o.key)
		p.ckInner.DeletionObserved(o.key)
	case "Raise":
		if tracking {
			p.upTrack.RaiseExpectations(lg, o.key, o.add, o.del)
			p.ckTrack.RaiseExpectations(o.key, o.add, o.del)
		} else {
			p.upInner.RaiseExpectations(lg, o.key, o.add, o.del)
			p.ckInner.RaiseExpectations(o.key, o.add, o.del)
		}
	case "Lower":
		if tracking {
			p.upTrack.LowerExpectations(lg, o.key, o.add, o.del)
			p.ckTrack.LowerExpectations(o.key, o.add, o.del)
		} else {
			p.upInner.LowerExpectations(lg, o.key, o.add, o.del)
			p.ckInner.LowerExpectations(o.key, o.add, o.del)
		}
	case "Delete":
		if tracking {
			p.upTrack.DeleteExpectations(lg, o.key)
			p.ckTrack.DeleteExpectations(o.key)
		} else {
			p.upInner.DeleteExpectations(lg, o.key)
			p.ckInner.DeleteExpectations(o.key)
		}
	case "InnerDelete":
		p.upInner.DeleteExpectations(lg, o.key)
		p.ckInner.DeleteExpectations(o.key)
		if tracking {
			// Modelled consequence of eviction: ctrlkit's dependent-key
			// set lives exactly as long as the wrapped record it was made
			// with, so that the sets of evicted records go with them.
			// Deleting the wrapped record ends that lifetime too. Upstream
			// never evicts, so its set outlives the record; the model
			// drops it there (the tracker's DeleteExpectations, whose
			// wrapped delete is a no-op now).
			p.upTrack.DeleteExpectations(lg, o.key)
		}
	case "Expire":
		// ctrlkit: every record is now older than the TTL, so it reads as
		// absent and is evicted, and the dependent-key sets made with it
		// end. Upstream's records cannot expire here (real clock), so the
		// model is what eviction amounts to: every record and set deleted.
		p.ckClock.Step(expectations.ExpectationsTimeout + time.Nanosecond)
		for _, k := range expKeys {
			if tracking {
				p.upTrack.DeleteExpectations(lg, k)
			} else {
				p.upInner.DeleteExpectations(lg, k)
			}
		}
	case "ExpectDeletionsKeys":
		keys := o.depKeys
		if o.nilSlice {
			keys = nil
		}
		upErr, ckErr = p.upTrack.ExpectDeletions(lg, o.key, keys), p.ckTrack.ExpectDeletions(o.key, keys)
	case "DeletionObservedKey":
		p.upTrack.DeletionObserved(lg, o.key, o.depKey)
		p.ckTrack.DeletionObserved(o.key, o.depKey)
	default:
		panic("unknown op " + o.kind)
	}
	if (upErr == nil) != (ckErr == nil) {
		return fmt.Sprintf("error: ctrlkit %v, upstream %v", ckErr, upErr)
	}
	return ""
}

// compare checks every key after a step: Satisfied, whether a record
// exists, its counts, Fulfilled, and (tracking) the dependent-key set.
func (p *expPair) compare(tracking bool) string {
	for _, k := range expKeys {
		var upSat, ckSat bool
		if tracking {
			upSat, ckSat = p.upTrack.SatisfiedExpectations(discard, k), p.ckTrack.SatisfiedExpectations(k)
		} else {
			upSat, ckSat = p.upInner.SatisfiedExpectations(discard, k), p.ckInner.SatisfiedExpectations(k)
		}
		if upSat != ckSat {
			return fmt.Sprintf("key %q: Satisfied = %v, upstream %v", k, ckSat, upSat)
		}
		ue, uok, uerr := p.upInner.GetExpectations(k)
		ce, cok, cerr := p.ckInner.GetExpectations(k)
		if uok != cok || (uerr == nil) != (cerr == nil) {
			return fmt.Sprintf("key %q: GetExpectations exists = %v (err %v), upstream %v (err %v)", k, cok, cerr, uok, uerr)
		}
		if uok {
			ua, ud := ue.GetExpectations()
			ca, cd := ce.GetExpectations()
			if ua != ca || ud != cd || ue.Fulfilled() != ce.Fulfilled() {
				return fmt.Sprintf("key %q: counts (add %d, del %d, fulfilled %v), upstream (add %d, del %d, fulfilled %v)", k, ca, cd, ce.Fulfilled(), ua, ud, ue.Fulfilled())
			}
		}
		if tracking {
			us := p.upTrack.GetUIDs(k)
			cs := p.ckTrack.GetUIDs(k)
			if (us == nil) != (cs == nil) || !sets.Set[string](us).Equal(cs) {
				return fmt.Sprintf("key %q: GetUIDs = %s, upstream %s", k, setString(cs), setString(sets.Set[string](us)))
			}
		}
	}
	return ""
}

func setString(s sets.Set[string]) string {
	if s == nil {
		return "nil"
	}
	return "{" + strings.Join(sets.List(s), ",") + "}"
}

func runExpOps(ops []expOp, tracking bool) string {
	p := newExpPair()
	if msg := p.compare(tracking); msg != "" {
		return "initially: " + msg
	}
	for i, o := range ops {
		if msg := p.apply(o, tracking); msg != "" {
			return fmt.Sprintf("after step %d %s: %s", i, o, msg)
		}
		if msg := p.compare(tracking); msg != "" {
			return fmt.Sprintf("after step %d %s: %s", i, o, msg)
		}
	}
	return ""
}

func expTarget(name string, tracking bool) target[[]expOp] {
	tg := target[[]expOp]{
		name:  name,
		gen:   func(r *rand.Rand) []expOp { return genExpOps(r, tracking) },
		check: func(ops []expOp) string { return runExpOps(ops, tracking) },
		shrink: func(ops []expOp) [][]expOp {
			out := removeEach(ops)
			for i, o := range ops { // simpler arguments
				if len(o.depKeys) > 0 {
					c := slices.Clone(ops)
					c[i].depKeys = o.depKeys[:len(o.depKeys)-1]
					out = append(out, c)
				}
			}
			return out
		},
		describe: func(ops []expOp) string {
			var b strings.Builder
			for i, o := range ops {
				fmt.Fprintf(&b, "  %d: %s\n", i, o)
			}
			return b.String()
		},
	}
	return tg
}

// TestParityExpectations applies random operation sequences to upstream's
// ControllerExpectations and to ctrlkit's, checking every key after every
// step. No case is skipped: the one behaviour ctrlkit adds, eviction of
// expired records, is modelled in the sequence itself (Expire).
func TestParityExpectations(t *testing.T) {
	expTarget("Expectations", false).run(t)
}

// TestParityUIDTrackingExpectations does the same through
// UIDTrackingControllerExpectations on both sides, with dependent-key
// deletions (duplicates, unexpected keys, nil slices) and deletes of the
// wrapped record mixed in; the dependent-key sets' lifetime, which follows
// from eviction, is modelled in InnerDelete and Expire.
func TestParityUIDTrackingExpectations(t *testing.T) {
	expTarget("UIDTrackingExpectations", true).run(t)
}
