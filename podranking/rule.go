package podranking

import "fmt"

// Rule names one step of the deletion order. The built-in rules are numbered
// as in upstream's ActivePodsWithRanks documentation.
type Rule int

const (
	// RuleNone means no rule told the pods apart: they are equivalent.
	RuleNone Rule = iota
	// RuleAssignment (1): a pod not yet assigned to a node goes first.
	RuleAssignment
	// RulePhase (2): Pending (and any unlisted phase) before Unknown before Running.
	RulePhase
	// RuleReadiness (3): a not-ready pod goes before a ready one.
	RuleReadiness
	// RuleDeletionCost (4): the lower pod-deletion-cost goes first.
	RuleDeletionCost
	// RuleRank (5): the higher rank (more co-located related pods) goes first.
	RuleRank
	// RuleReadyTime (6): between two ready pods, the more recently ready goes
	// first, on a log2 scale; equal instants fall through, and different
	// ones within a bucket compare by UID.
	RuleReadyTime
	// RuleRestarts (7): more container restarts first, regular before sidecar.
	RuleRestarts
	// RuleCreationTime (8): the more recently created goes first, on a log2
	// scale, as RuleReadyTime.
	RuleCreationTime
	// RuleExtension: an extra Ranker supplied through options decided.
	RuleExtension
	// RuleNil: exactly one of the two pods is nil; nil pods go last.
	RuleNil
	// RuleNamed: the caller named pod A to be deleted first (a scale-in by
	// name, as podset's ScaleInKind). The ranking never decides by it; a
	// caller that deletes named pods ahead of the ranking reports it.
	RuleNamed
)

var ruleNames = [...]string{
	RuleNone:         "no rule (equivalent)",
	RuleAssignment:   "unassigned first",
	RulePhase:        "earlier phase first",
	RuleReadiness:    "not-ready first",
	RuleDeletionCost: "lower deletion cost first",
	RuleRank:         "more co-located pods first",
	RuleReadyTime:    "more recently ready first",
	RuleRestarts:     "more restarts first",
	RuleCreationTime: "more recently created first",
	RuleExtension:    "extension ranker",
	RuleNil:          "nil pod last",
	RuleNamed:        "named to delete first",
}

// String returns a short human description of the rule.
func (r Rule) String() string {
	if r >= 0 && int(r) < len(ruleNames) {
		return ruleNames[r]
	}
	return fmt.Sprintf("Rule(%d)", int(r))
}
