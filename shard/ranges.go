package shard

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Range is a closed interval [First, Last] of the 64-bit hash space. It is
// closed rather than half-open so that the top of the space needs no
// sentinel: the selector writes it as [First, Last+1), and Last+1 may be
// 2^64 there. First must not exceed Last.
type Range struct {
	First, Last uint64
}

// Contains reports whether h falls in r.
func (r Range) Contains(h uint64) bool { return r.First <= h && h <= r.Last }

// Bounds returns r as the half-open pair of a shardRange() term: lowercase,
// 0x-prefixed, 16 hex digits, and "0x10000000000000000" for the end of the
// space, the only forms the API server accepts.
func (r Range) Bounds() (lo, hi string) {
	lo = fmt.Sprintf("0x%016x", r.First)
	if r.Last == math.MaxUint64 {
		return lo, "0x10000000000000000"
	}
	return lo, fmt.Sprintf("0x%016x", r.Last+1)
}

func (r Range) String() string {
	lo, hi := r.Bounds()
	return "[" + lo + ", " + hi + ")"
}

// Ranges is a set of hashes kept as sorted, disjoint, non-adjacent ranges.
// Build one with NewRanges, FullRanges or the set operations, which keep
// that form; the nil Ranges is the empty set.
type Ranges []Range

// FullRanges is the whole hash space.
func FullRanges() Ranges { return Ranges{{First: 0, Last: math.MaxUint64}} }

// NewRanges returns the union of rs in normal form. A range whose First
// exceeds its Last is a programmer error and panics.
func NewRanges(rs ...Range) Ranges {
	for _, r := range rs {
		if r.First > r.Last {
			panic(fmt.Sprintf("shard: NewRanges: range with first %#x after last %#x", r.First, r.Last))
		}
	}
	return normalize(slices.Clone(rs))
}

// normalize sorts rs in place and merges overlapping and adjacent ranges.
func normalize(rs []Range) Ranges {
	if len(rs) == 0 {
		return nil
	}
	slices.SortFunc(rs, func(a, b Range) int {
		switch {
		case a.First < b.First:
			return -1
		case a.First > b.First:
			return 1
		}
		return 0
	})
	out := rs[:1]
	for _, r := range rs[1:] {
		cur := &out[len(out)-1]
		// cur.Last == MaxUint64 swallows everything after it; testing that
		// first keeps cur.Last+1 from wrapping to zero.
		if cur.Last == math.MaxUint64 || r.First <= cur.Last+1 {
			cur.Last = max(cur.Last, r.Last)
			continue
		}
		out = append(out, r)
	}
	return Ranges(out)
}

// Contains reports whether h is in the set, in O(log n).
func (rs Ranges) Contains(h uint64) bool {
	i, _ := slices.BinarySearchFunc(rs, h, func(r Range, h uint64) int {
		if r.Last < h {
			return -1
		}
		if r.First > h {
			return 1
		}
		return 0
	})
	return i < len(rs) && rs[i].Contains(h)
}

// Empty reports whether the set holds no hash.
func (rs Ranges) Empty() bool { return len(rs) == 0 }

// Equal reports whether both sets hold the same hashes.
func (rs Ranges) Equal(o Ranges) bool { return slices.Equal(rs, o) }

// Union returns the hashes in rs or o.
func (rs Ranges) Union(o Ranges) Ranges {
	return normalize(append(slices.Clone(rs), o...))
}

// Intersect returns the hashes in both rs and o.
func (rs Ranges) Intersect(o Ranges) Ranges {
	var out Ranges
	for i, j := 0, 0; i < len(rs) && j < len(o); {
		first, last := max(rs[i].First, o[j].First), min(rs[i].Last, o[j].Last)
		if first <= last {
			out = append(out, Range{First: first, Last: last})
		}
		if rs[i].Last < o[j].Last {
			i++
		} else {
			j++
		}
	}
	return out
}

// Overlaps reports whether rs and o share a hash.
func (rs Ranges) Overlaps(o Ranges) bool { return len(rs.Intersect(o)) > 0 }

// Subtract returns the hashes in rs that are not in o.
func (rs Ranges) Subtract(o Ranges) Ranges {
	var out Ranges
	j := 0
	for _, r := range rs {
		for j < len(o) && o[j].Last < r.First {
			j++
		}
		first, covered := r.First, false
		for k := j; k < len(o) && o[k].First <= r.Last; k++ {
			if o[k].First > first {
				out = append(out, Range{First: first, Last: o[k].First - 1})
			}
			if o[k].Last >= r.Last {
				covered = true
				break
			}
			first = o[k].Last + 1 // no wrap: o[k].Last < r.Last
		}
		if !covered {
			out = append(out, Range{First: first, Last: r.Last})
		}
	}
	return out
}

// Fraction returns the share of the hash space the set covers, in [0, 1],
// to float64 precision.
func (rs Ranges) Fraction() float64 {
	var total float64
	for _, r := range rs {
		total += float64(r.Last-r.First) + 1
	}
	return total / math.Exp2(64)
}

// String writes the set compactly as "first-last" pairs of 16 hex digits
// separated by commas, the form a member publishes in its Lease; the empty
// set is "". ParseRanges reads it back.
func (rs Ranges) String() string {
	var b strings.Builder
	for i, r := range rs {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%016x-%016x", r.First, r.Last)
	}
	return b.String()
}

// ParseRanges reads the form String writes. It accepts any hex width and
// unsorted or overlapping pairs, and returns the set in normal form.
func ParseRanges(s string) (Ranges, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	rs := make([]Range, 0, len(parts))
	for _, p := range parts {
		firstText, lastText, ok := strings.Cut(strings.TrimSpace(p), "-")
		if !ok {
			return nil, fmt.Errorf("shard: range %q: want first-last in hex", p)
		}
		first, err := strconv.ParseUint(firstText, 16, 64)
		if err != nil {
			return nil, fmt.Errorf("shard: range %q: %w", p, err)
		}
		last, err := strconv.ParseUint(lastText, 16, 64)
		if err != nil {
			return nil, fmt.Errorf("shard: range %q: %w", p, err)
		}
		if first > last {
			return nil, fmt.Errorf("shard: range %q: first after last", p)
		}
		rs = append(rs, Range{First: first, Last: last})
	}
	return normalize(rs), nil
}
