package podranking

// cmpInt orders a before b (-1) when a < b.
func cmpInt[T ~int | ~int32 | ~int64 | ~uint64 | ~int16](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareBuiltin applies upstream's eight rules to two keys. It returns the
// deciding rule and -1 (a first), 1 (b first) or 0 (equivalent). It equals
// upstream's Less in both directions on every pair except the equal-instant
// corner described in the package documentation.
func (p *policy) compareBuiltin(a, b *sortKey) (Rule, int) {
	if a.head != b.head {
		return headRule(a.head, b.head), cmpInt(a.head, b.head)
	}
	if a.head&headNilBit != 0 {
		return RuleNone, 0
	}
	if a.rank != b.rank {
		return RuleRank, -cmpInt(a.rank, b.rank)
	}
	// Equal heads mean equal readiness, so hasReady is true for both or neither.
	if a.hasReady {
		if c, decided := p.compareTimes(a.ready, b.ready, a, b); decided {
			return RuleReadyTime, c
		}
	}
	ra, sa := a.restarts()
	rb, sb := b.restarts()
	if ra != rb {
		return RuleRestarts, -cmpInt(ra, rb)
	}
	if sa != sb {
		return RuleRestarts, -cmpInt(sa, sb)
	}
	if c, decided := p.compareTimes(a.created, b.created, a, b); decided {
		return RuleCreationTime, c
	}
	return RuleNone, 0
}

// headRule names the highest packed field in which two different heads differ.
func headRule(a, b uint64) Rule {
	d := a ^ b
	switch {
	case d&headNilBit != 0:
		return RuleNil
	case d&headAssignedBit != 0:
		return RuleAssignment
	case d&(3<<headPhaseShift) != 0:
		return RulePhase
	case d&headReadyBit != 0:
		return RuleReadiness
	default:
		return RuleDeletionCost
	}
}

// compareTimes is rules 6 and 8. decided=false means "fall through to the
// next rule". The younger time goes first; a zero time goes before any other.
// With log scaling, times in the same power-of-two bucket of age are ordered
// by UID, and two equal UIDs with different instants are equivalent.
//
// The one deliberate departure from upstream: two equal, non-zero instants
// under log scaling are ordered by UID when the UIDs differ, where upstream
// falls through to the later rules. Upstream's choice makes its relation
// cyclic (see the package documentation); ours keeps a strict weak order for
// pods with distinct UIDs, which real pods always have.
func (p *policy) compareTimes(ta, tb stamp, a, b *sortKey) (int, bool) {
	if ta.equal(tb) {
		if p.logScale && !ta.zero {
			if c := cmpUID(a, b); c != 0 {
				return c, true
			}
		}
		return 0, false
	}
	if ta.zero || tb.zero {
		if ta.zero {
			return -1, true
		}
		return 1, true
	}
	if !p.logScale {
		if ta.after(tb) {
			return -1, true
		}
		return 1, true
	}
	if ta.bucket != tb.bucket {
		return cmpInt(ta.bucket, tb.bucket), true
	}
	return cmpUID(a, b), true
}

func cmpUID(a, b *sortKey) int {
	if a.uidHead != b.uidHead {
		return cmpInt(a.uidHead, b.uidHead)
	}
	switch {
	case a.uid < b.uid:
		return -1
	case a.uid > b.uid:
		return 1
	}
	return 0
}
