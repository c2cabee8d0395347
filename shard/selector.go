package shard

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
)

// ErrNoRanges is returned for a selector over the empty set. The API server
// reads an empty shardSelector as "everything", so a member that owns nothing
// must not list at all rather than send "".
var ErrNoRanges = errors.New("shard: no ranges to select")

// Selector returns the shardSelector of ListOptions that selects exactly rs
// by k: one shardRange() term per range, ORed, in ascending order. It is
// written the way the API server writes it back in ListMeta.ShardInfo, so
// the echo of a request compares equal to what was sent.
func (rs Ranges) Selector(k Key) (string, error) {
	if !k.Valid() {
		return "", fmt.Errorf("%w %q", ErrUnsupportedKey, string(k))
	}
	if rs.Empty() {
		return "", ErrNoRanges
	}
	var b strings.Builder
	for i, r := range rs {
		if i > 0 {
			b.WriteString(" || ")
		}
		lo, hi := r.Bounds()
		fmt.Fprintf(&b, "shardRange(%s, '%s', '%s')", k, lo, hi)
	}
	return b.String(), nil
}

// ParseSelector reads a shardSelector made of shardRange() terms joined by
// ||, as Selector writes it and the API server echoes it, and returns its
// key and the set it selects. All terms must use one key.
func ParseSelector(s string) (Key, Ranges, error) {
	if strings.TrimSpace(s) == "" {
		return "", nil, ErrNoRanges
	}
	var key Key
	var rs []Range
	for _, term := range strings.Split(s, "||") {
		k, r, err := parseTerm(strings.TrimSpace(term))
		if err != nil {
			return "", nil, err
		}
		if key != "" && k != key {
			return "", nil, fmt.Errorf("shard: selector mixes keys %q and %q", key, k)
		}
		key = k
		rs = append(rs, r)
	}
	return key, normalize(rs), nil
}

func parseTerm(term string) (Key, Range, error) {
	inner, ok := strings.CutPrefix(term, "shardRange(")
	if ok {
		inner, ok = strings.CutSuffix(inner, ")")
	}
	if !ok {
		return "", Range{}, fmt.Errorf("shard: selector term %q: want shardRange(key, 'lo', 'hi')", term)
	}
	args := strings.Split(inner, ",")
	if len(args) != 3 {
		return "", Range{}, fmt.Errorf("shard: selector term %q: want three arguments", term)
	}
	k := Key(strings.TrimSpace(args[0]))
	if !k.Valid() {
		return "", Range{}, fmt.Errorf("%w %q", ErrUnsupportedKey, string(k))
	}
	lo, err := parseBound(args[1])
	if err != nil {
		return "", Range{}, fmt.Errorf("shard: selector term %q: %w", term, err)
	}
	hi, err := parseBound(args[2])
	if err != nil {
		return "", Range{}, fmt.Errorf("shard: selector term %q: %w", term, err)
	}
	// Bounds are half-open; hi is at most 2^64, which parseBound reports as
	// (0, true).
	if lo.top || (!hi.top && hi.v <= lo.v) {
		return "", Range{}, fmt.Errorf("shard: selector term %q: empty range", term)
	}
	last := hi.v - 1 // for hi = 2^64, hi.v is 0 and this wraps to MaxUint64, as meant
	return k, Range{First: lo.v, Last: last}, nil
}

// bound is a value in [0, 2^64]; top marks 2^64 itself.
type bound struct {
	v   uint64
	top bool
}

// parseBound reads a quoted bound the way the API server insists on: '0x'
// and 16 lowercase hex digits, or '0x10000000000000000'.
func parseBound(arg string) (bound, error) {
	text := strings.TrimSpace(arg)
	unquoted, ok := strings.CutPrefix(text, "'")
	if ok {
		unquoted, ok = strings.CutSuffix(unquoted, "'")
	}
	if !ok {
		return bound{}, fmt.Errorf("bound %s: want a single-quoted string", text)
	}
	if unquoted == "0x10000000000000000" {
		return bound{top: true}, nil
	}
	digits, ok := strings.CutPrefix(unquoted, "0x")
	if !ok || len(digits) != 16 {
		return bound{}, fmt.Errorf("bound %s: want 0x and 16 hex digits", text)
	}
	var v uint64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		default:
			return bound{}, fmt.Errorf("bound %s: %q is not a lowercase hex digit", text, c)
		}
		v = v<<4 | uint64(d)
	}
	return bound{v: v}, nil
}

// ServerFiltered reports whether a list answer was filtered by the API
// server to exactly the set rs by k: its ShardInfo must be present and echo
// a selector for the same key and set (EchoedSelector). When it reports
// false, the server ignored the selector (the ShardedListAndWatch gate is
// off), answered for another set, or the Kubernetes libraries predate
// server-side selection (ServerSelection), and the client must filter each
// object itself with Ranges.Contains.
func ServerFiltered(list runtime.Object, k Key, rs Ranges) bool {
	sel, ok := EchoedSelector(list)
	if !ok {
		return false
	}
	key, got, err := ParseSelector(sel)
	return err == nil && key == k && got.Equal(rs)
}
