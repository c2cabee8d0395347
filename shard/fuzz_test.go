package shard

import "testing"

// Selectors and claims come from other processes: whatever they hold,
// parsing returns an error or a set that writes back to itself.
func FuzzParseSelector(f *testing.F) {
	for _, seed := range []string{
		"shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')",
		"shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.namespace, '0xc000000000000000', '0xd000000000000000')",
		"shardRange(object.metadata.uid, '0x0', '0x1')",
		"shardRange(,,)||",
		"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, rs, err := ParseSelector(s)
		if err != nil {
			return
		}
		sel, err := rs.Selector(k)
		if err != nil {
			t.Fatalf("%q parsed to %q %v, which does not write back: %v", s, k, rs, err)
		}
		k2, rs2, err := ParseSelector(sel)
		if err != nil || k2 != k || !rs2.Equal(rs) {
			t.Fatalf("%q → %q → %q %v %v", s, sel, k2, rs2, err)
		}
	})
}

func FuzzParseRanges(f *testing.F) {
	for _, seed := range []string{"", "0-ff", "0000000000000000-ffffffffffffffff", "5-1", "1-2,2-3,a-b", "-,"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rs, err := ParseRanges(s)
		if err != nil {
			return
		}
		checkNormal(t, rs)
		back, err := ParseRanges(rs.String())
		if err != nil || !back.Equal(rs) {
			t.Fatalf("%q → %q → %v %v", s, rs.String(), back, err)
		}
	})
}
