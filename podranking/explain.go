package podranking

import (
	"fmt"
	"strconv"
	"time"

	"github.com/ctrlkit/ctrlkit/podstate"
)

// Decision explains how the deletion order places two pods, A and B: which
// rule told them apart and the values it compared. Operators use it to answer
// "why was this pod deleted before that one?".
type Decision struct {
	// A and B are the pods' namespace/name keys ("<nil>" for a nil pod).
	A, B string
	// Rule is the first rule that told the pods apart, or RuleNone.
	Rule Rule
	// Ranker names the extension ranker when Rule is RuleExtension.
	Ranker string
	// Order is -1 when A is deleted first, 1 when B is, 0 when the pods are
	// equivalent under every rule (sort.Sort then places them as upstream).
	Order int
	// AValue and BValue are the values Rule compared, rendered for humans.
	AValue, BValue string
	// Note adds context: for time rules the log2 buckets and the UIDs
	// compared, and for any later rule the time rules it fell through
	// because the pods share an instant.
	Note string
}

// AFirst reports whether A is deleted before B.
func (d Decision) AFirst() bool { return d.Order < 0 }

// String renders the decision in one line, for logs and events.
func (d Decision) String() string {
	if d.Order == 0 {
		return fmt.Sprintf("%s and %s are equivalent: every rule ties", d.A, d.B)
	}
	first, second := d.A, d.B
	fv, sv := d.AValue, d.BValue
	if d.Order > 0 {
		first, second, fv, sv = second, first, sv, fv
	}
	rule := d.Rule.String()
	if d.Rule == RuleExtension {
		rule = "extension " + strconv.Quote(d.Ranker)
	}
	s := fmt.Sprintf("%s before %s: %s (%s vs %s)", first, second, rule, fv, sv)
	if d.Note != "" {
		s += "; " + d.Note
	}
	return s
}

func podName(k *key) string {
	if k.pod == nil {
		return "<nil>"
	}
	return podstate.Key(k.pod)
}

// explain builds the Decision for two keys of a prepared ranking.
func (r *Ranking) explain(a, b *key) Decision {
	rule, ranker, c := r.compareFrom(0, a, b)
	d := Decision{A: podName(a), B: podName(b), Rule: rule, Order: c}
	switch rule {
	case RuleExtension:
		n := len(r.pods)
		d.Ranker = r.sel.rankers[ranker].Name()
		d.AValue = strconv.FormatInt(r.scores[ranker*n+int(a.idx)], 10)
		d.BValue = strconv.FormatInt(r.scores[ranker*n+int(b.idx)], 10)
		d.Note = "lower score first"
	case RuleNil:
		d.AValue, d.BValue = nilness(a), nilness(b)
	case RuleAssignment:
		d.AValue, d.BValue = nodeOf(a), nodeOf(b)
	case RulePhase:
		d.AValue, d.BValue = phaseOf(a), phaseOf(b)
	case RuleReadiness:
		d.AValue, d.BValue = readyOf(a), readyOf(b)
	case RuleDeletionCost:
		d.AValue, d.BValue = costOf(a), costOf(b)
	case RuleRank:
		d.AValue, d.BValue = strconv.Itoa(a.rank), strconv.Itoa(b.rank)
	case RuleRestarts:
		regularA, sidecarA := a.restarts()
		regularB, sidecarB := b.restarts()
		d.AValue = fmt.Sprintf("regular %d, sidecar %d", regularA, sidecarA)
		d.BValue = fmt.Sprintf("regular %d, sidecar %d", regularB, sidecarB)
	case RuleReadyTime:
		d.AValue, d.BValue, d.Note = r.timeValues(classReady, a, b, readyTime(a.pod), readyTime(b.pod), a.readyBucket, b.readyBucket)
	case RuleCreationTime:
		d.AValue, d.BValue, d.Note = r.timeValues(classCreated, a, b, a.pod.CreationTimestamp.Time, b.pod.CreationTimestamp.Time, a.createdBucket, b.createdBucket)
	}
	if rule != RuleExtension || ranker >= len(r.sel.cfg.first) {
		d.Note = joinNote(d.Note, r.fellThrough(rule, a, b))
	}
	return d
}

func joinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// fellThrough names the time rules a decision by a later rule passed over
// because the two pods share an instant, as upstream passes over equal
// instants.
func (r *Ranking) fellThrough(rule Rule, a, b *key) string {
	if a.pod == nil || b.pod == nil || a.head != b.head || a.rank != b.rank {
		return ""
	}
	note := ""
	later := rule == RuleNone || rule == RuleExtension
	if ra := readyTime(a.pod); !ra.IsZero() && (later || rule == RuleRestarts || rule == RuleCreationTime) && ra.Equal(readyTime(b.pod)) {
		note = "same ready instant " + fmtTime(ra) + ": fell through"
	}
	if ca := a.pod.CreationTimestamp.Time; later && !ca.IsZero() && ca.Equal(b.pod.CreationTimestamp.Time) {
		note = joinNote(note, "same creation instant "+fmtTime(ca)+": fell through")
	}
	return note
}

func nilness(k *key) string {
	if k.pod == nil {
		return "nil"
	}
	return "pod"
}

func nodeOf(k *key) string {
	if k.pod.Spec.NodeName == "" {
		return "unassigned"
	}
	return "node " + k.pod.Spec.NodeName
}

func phaseOf(k *key) string {
	p := string(k.pod.Status.Phase)
	if p == "" {
		p = `""`
	}
	return fmt.Sprintf("%s (ordinal %d)", p, phaseOrdinal(k.pod.Status.Phase))
}

func readyOf(k *key) string {
	if k.head&headReadyBit != 0 {
		return "ready"
	}
	return "not ready"
}

func costOf(k *key) string {
	return strconv.FormatInt(int64(k.head&headCostMask)-costBias, 10)
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "zero time"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func (r *Ranking) timeValues(rule int, a, b *key, ta, tb time.Time, ba, bb int16) (string, string, string) {
	what := "ready"
	if rule == classCreated {
		what = "creation"
	}
	av, bv := fmtTime(ta), fmtTime(tb)
	switch {
	case ta.IsZero() || tb.IsZero():
		return av, bv, "a zero time goes first"
	case !r.pol.logScale:
		return av, bv, "plain comparison, more recent first"
	case ba != bb:
		return av, bv, fmt.Sprintf("log2 age buckets %d vs %d, younger bucket first", ba, bb)
	case r.pol.classes == nil && a.pod.UID == b.pod.UID:
		return av, bv, fmt.Sprintf("%s instants differ within log2 bucket %d: equal UIDs %q, equivalent", what, ba, a.pod.UID)
	case r.pol.classes == nil:
		return av, bv, fmt.Sprintf("%s instants differ within log2 bucket %d: smaller UID first (%q vs %q)", what, ba, a.pod.UID, b.pod.UID)
	}
	ca, cb := r.pol.classes[a.idx].ready, r.pol.classes[b.idx].ready
	if rule == classCreated {
		ca, cb = r.pol.classes[a.idx].created, r.pol.classes[b.idx].created
	}
	switch {
	case ca.uid != cb.uid:
		return av, bv, fmt.Sprintf("%s instants differ within log2 bucket %d: instant class UID %q vs %q (smallest UID of the pods sharing each instant)", what, ba, ca.uid, cb.uid)
	case ca.multi != cb.multi:
		return av, bv, fmt.Sprintf("%s instants differ within log2 bucket %d: equal class UID %q, the class of one pod first", what, ba, ca.uid)
	case ca.multi:
		return av, bv, fmt.Sprintf("%s instants differ within log2 bucket %d: equal class UID %q, more recent first", what, ba, ca.uid)
	}
	return av, bv, fmt.Sprintf("%s instants differ within log2 bucket %d: equal UIDs %q, equivalent", what, ba, ca.uid)
}
