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
	// equivalent under every rule (they then keep their input order).
	Order int
	// AValue and BValue are the values Rule compared, rendered for humans.
	AValue, BValue string
	// Note adds context: for time rules the log2 buckets and the instant
	// classes compared, and for any later rule the time rules it fell
	// through because the pods share an instant.
	Note string
}

// AFirst reports whether A is deleted before B.
func (d Decision) AFirst() bool { return d.Order < 0 }

// String renders the decision in one line, for logs and events.
func (d Decision) String() string {
	if d.Order == 0 {
		return fmt.Sprintf("%s and %s are equivalent: every rule ties (input order decides)", d.A, d.B)
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

func podName(k *sortKey) string {
	if k.pod == nil {
		return "<nil>"
	}
	return podstate.Key(k.pod)
}

// explain builds the Decision for positions i and j of a prepared order.
func (o *order) explain(i, j int) Decision {
	a, b := &o.keys[i], &o.keys[j]
	rule, ranker, c := o.compareFrom(0, i, j)
	d := Decision{A: podName(a), B: podName(b), Rule: rule, Order: c}
	switch rule {
	case RuleExtension:
		n := len(o.keys)
		d.Ranker = o.rankers[ranker].Name()
		d.AValue = strconv.FormatInt(o.scores[ranker*n+i], 10)
		d.BValue = strconv.FormatInt(o.scores[ranker*n+j], 10)
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
		a.restarts()
		b.restarts()
		d.AValue = fmt.Sprintf("regular %d, sidecar %d", a.regular, a.sidecar)
		d.BValue = fmt.Sprintf("regular %d, sidecar %d", b.regular, b.sidecar)
	case RuleReadyTime:
		d.AValue, d.BValue, d.Note = o.timeValues("ready", a.ready, b.ready, &a.r6, &b.r6, a, b)
	case RuleCreationTime:
		d.AValue, d.BValue, d.Note = o.timeValues("creation", a.created, b.created, &a.r8, &b.r8, a, b)
	}
	if rule != RuleExtension || ranker >= o.nFirst {
		d.Note = joinNote(d.Note, o.fellThrough(rule, a, b))
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
// because the two pods share an instant class, as upstream passes over equal
// instants.
func (o *order) fellThrough(rule Rule, a, b *sortKey) string {
	if !o.pol.logScale || a.pod == nil || b.pod == nil || a.head != b.head || a.rank != b.rank {
		return ""
	}
	note := ""
	later := rule == RuleNone || rule == RuleExtension
	if a.hasReady && !a.ready.zero && (later || rule == RuleRestarts || rule == RuleCreationTime) && a.ready.equal(b.ready) {
		note = "same ready instant " + fmtStamp(a.ready) + ": fell through"
	}
	if later && !a.created.zero && a.created.equal(b.created) {
		note = joinNote(note, "same creation instant "+fmtStamp(a.created)+": fell through")
	}
	return note
}

func nilness(k *sortKey) string {
	if k.pod == nil {
		return "nil"
	}
	return "pod"
}

func nodeOf(k *sortKey) string {
	if k.pod.Spec.NodeName == "" {
		return "unassigned"
	}
	return "node " + k.pod.Spec.NodeName
}

func phaseOf(k *sortKey) string {
	p := string(k.pod.Status.Phase)
	if p == "" {
		p = `""`
	}
	return fmt.Sprintf("%s (ordinal %d)", p, phaseOrdinal(k.pod.Status.Phase))
}

func readyOf(k *sortKey) string {
	if k.hasReady {
		return "ready"
	}
	return "not ready"
}

func costOf(k *sortKey) string {
	return strconv.FormatInt(int64(k.head&headCostMask)-costBias, 10)
}

func fmtStamp(s stamp) string {
	if s.zero {
		return "zero time"
	}
	return time.Unix(s.sec, int64(s.nsec)).UTC().Format(time.RFC3339Nano)
}

func (o *order) timeValues(what string, ta, tb stamp, ca, cb *classRef, a, b *sortKey) (string, string, string) {
	av, bv := fmtStamp(ta), fmtStamp(tb)
	switch {
	case ta.zero || tb.zero:
		return av, bv, "a zero time goes first"
	case !o.pol.logScale:
		return av, bv, "plain comparison, more recent first"
	case ta.bucket != tb.bucket:
		return av, bv, fmt.Sprintf("log2 age buckets %d vs %d, younger bucket first", ta.bucket, tb.bucket)
	}
	ownUIDs := ca.uid == a.uid && cb.uid == b.uid && !ca.multi && !cb.multi
	switch {
	case cmpClass(ca, cb) != 0 && ownUIDs:
		return av, bv, fmt.Sprintf("%s instants differ within log2 bucket %d: UID %q vs %q (each pod's own UID)", what, ta.bucket, ca.uid, cb.uid)
	case cmpClass(ca, cb) != 0:
		return av, bv, fmt.Sprintf("%s instants differ within log2 bucket %d: class representative UID %q vs %q (smallest UID of each pod's instant class)", what, ta.bucket, ca.uid, cb.uid)
	case ca.multi != cb.multi:
		return av, bv, fmt.Sprintf("%s instants differ within log2 bucket %d: equal class representative UID %q, the class of one pod first", what, ta.bucket, ca.uid)
	case ca.multi:
		return av, bv, fmt.Sprintf("%s instants differ within log2 bucket %d: equal class representative UID %q, more recent first", what, ta.bucket, ca.uid)
	default:
		return av, bv, fmt.Sprintf("%s instants differ within log2 bucket %d: equal UIDs %q, equivalent as upstream", what, ta.bucket, ca.uid)
	}
}
