package podranking

import "github.com/ctrlkit/ctrlkit/internal/partialsort"

// The deletion order is sorted by partialsort, which makes exactly
// sort.Sort's decisions for the first positions: upstream's Less is not a
// total order, so only those decisions give upstream's answer. An entry
// packs rules 1 to 5 of a key into its Primary, so that most comparisons
// read neither the key nor another cache line; Ranking.tie decides the
// rest.

// Rules 1 to 4 are key.head, in the high bits of Primary; rule 5, the
// higher rank first, is the low rankBits bits, rankField(rank). Ranks
// outside [0, maxPackedRank] share the field of the nearest end and are
// told apart by tie.
const (
	rankBits      = 64 - headBits
	maxPackedRank = 1<<rankBits - 2
)

// rankField maps rank onto [0, 2^rankBits), decreasing, so that a higher
// rank packs smaller.
func rankField(rank int) uint64 {
	return uint64(maxPackedRank - min(max(rank, -1), maxPackedRank))
}

// entryOf packs the key at input position pos.
func entryOf(k *key, pos int) partialsort.Entry {
	return partialsort.Entry{Primary: k.head<<rankBits | rankField(k.rank), Pos: int32(pos)}
}

// tie is upstream's Less for the keys at input positions a and b, whose
// packed rules 1 to 5 are equal.
func (r *Ranking) tie(a, b int32) bool {
	ka, kb := &r.keys[a], &r.keys[b]
	if ka.rank != kb.rank {
		return ka.rank > kb.rank // ranks beyond the packed range
	}
	if ka.head&headNilBit != 0 {
		return false // two nil pods are equivalent
	}
	_, c := r.pol.compareTimesAndRestarts(ka, kb)
	return c < 0
}
