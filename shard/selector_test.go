package shard

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
)

func TestSelectorFullAndHalves(t *testing.T) {
	cases := []struct {
		rs   Ranges
		key  Key
		want string
	}{
		{FullRanges(), KeyUID, "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')"},
		{Ranges{{0, 1<<63 - 1}}, KeyUID, "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"},
		{Ranges{{1 << 63, math.MaxUint64}}, KeyNamespace, "shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')"},
		{Ranges{{0, 0}, {0xc000000000000000, math.MaxUint64 - 1}}, KeyUID,
			"shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000001') || shardRange(object.metadata.uid, '0xc000000000000000', '0xffffffffffffffff')"},
	}
	for _, c := range cases {
		got, err := c.rs.Selector(c.key)
		if err != nil || got != c.want {
			t.Errorf("%v: got %q, %v\nwant %q", c.rs, got, err, c.want)
		}
	}
}

func TestSelectorRefusesEmptySetAndBadKey(t *testing.T) {
	if _, err := Ranges(nil).Selector(KeyUID); !errors.Is(err, ErrNoRanges) {
		t.Fatalf("empty set: %v", err)
	}
	if _, err := FullRanges().Selector(Key("metadata.uid")); !errors.Is(err, ErrUnsupportedKey) {
		t.Fatalf("bad key: %v", err)
	}
}

// The selector must be written exactly as the API server writes it back in
// ShardInfo, and select exactly what Contains selects: checked against
// apimachinery's own Selector on random objects and random shares.
func TestSelectorAgreesWithAPIMachinery(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 20 {
		members := []string{"a", "b", "c", "d", "e"}[:1+trial%5]
		share := Assign(members, WithSlots(16+trial))[members[0]]
		var reqs []sharding.ShardRangeRequirement
		for _, rg := range share {
			lo, hi := rg.Bounds()
			reqs = append(reqs, sharding.ShardRangeRequirement{Key: string(KeyUID), Start: lo, End: hi})
		}
		server := sharding.NewSelector(reqs...)
		ours, err := share.Selector(KeyUID)
		if err != nil {
			t.Fatal(err)
		}
		if ours != server.String() {
			t.Fatalf("selector %q, apimachinery writes %q", ours, server.String())
		}
		for range 500 {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(randomUID(r))}}
			want, err := server.Matches(pod)
			if err != nil {
				t.Fatal(err)
			}
			h, _ := HashObject(pod, KeyUID)
			if share.Contains(h) != want {
				t.Fatalf("uid %s (hash %#x): Contains %v, server selector %v", pod.UID, h, !want, want)
			}
		}
	}
}

func TestParseSelectorRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	pool := pointPool()
	for range 500 {
		rs := randomSet(r, pool)
		if rs.Empty() {
			continue
		}
		sel, err := rs.Selector(KeyNamespace)
		if err != nil {
			t.Fatal(err)
		}
		k, back, err := ParseSelector(sel)
		if err != nil || k != KeyNamespace || !back.Equal(rs) {
			t.Fatalf("%q: %q %v %v", sel, k, back, err)
		}
	}
}

func TestParseSelectorRefusesWhatTheServerRefuses(t *testing.T) {
	for _, bad := range []string{
		"",
		"shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",
		"shardRange(object.metadata.uid, '0x8000000000000000', '0x0000000000000000')",
		"shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000000')",
		"shardRange(object.metadata.uid, '0xABCDEF0000000000', '0x10000000000000000')",
		"shardRange(object.metadata.name, '0x0000000000000000', '0x10000000000000000')",
		"shardRange(object.metadata.uid, 0x0000000000000000, '0x10000000000000000')",
		"shardRange(object.metadata.uid, '0x0000000000000000')",
		"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')",
		"labels(a)",
	} {
		if _, _, err := ParseSelector(bad); err == nil {
			t.Errorf("ParseSelector(%q): no error", bad)
		}
	}
}

func TestServerFiltered(t *testing.T) {
	half := Ranges{{0, 1<<63 - 1}}
	sel, _ := half.Selector(KeyUID)
	cases := []struct {
		name string
		info *metav1.ShardInfo
		want bool
	}{
		{"gate off: no ShardInfo", nil, false},
		{"echo of our selector", &metav1.ShardInfo{Selector: sel}, true},
		{"echo with other spacing", &metav1.ShardInfo{Selector: "shardRange( object.metadata.uid ,'0x0000000000000000','0x8000000000000000' )"}, true},
		{"another set", &metav1.ShardInfo{Selector: "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')"}, false},
		{"another key", &metav1.ShardInfo{Selector: "shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')"}, false},
		{"garbage", &metav1.ShardInfo{Selector: "?"}, false},
	}
	for _, c := range cases {
		if got := ServerFiltered(c.info, KeyUID, half); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
