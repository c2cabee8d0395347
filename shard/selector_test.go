package shard

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
		echo *string
		want bool
	}{
		{"gate off: no ShardInfo", nil, false},
		{"echo of our selector", &sel, true},
		{"echo with other spacing", new("shardRange( object.metadata.uid ,'0x0000000000000000','0x8000000000000000' )"), true},
		{"another set", new("shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')"), false},
		{"another key", new("shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')"), false},
		{"garbage", new("?"), false},
	}
	for _, c := range cases {
		// Unstructured answers carry the echo with every library version.
		u := &unstructured.UnstructuredList{}
		if c.echo != nil {
			require.True(t, SetEchoedSelector(u, *c.echo))
		}
		if got := ServerFiltered(u, KeyUID, half); got != c.want {
			t.Errorf("unstructured, %s: %v, want %v", c.name, got, c.want)
		}
		// Typed answers carry it only from v0.36 on; before, it is never
		// seen and the client always filters.
		typed := &corev1.PodList{}
		if c.echo != nil {
			require.Equal(t, ServerSelection(), SetEchoedSelector(typed, *c.echo))
		}
		if got := ServerFiltered(typed, KeyUID, half); got != (c.want && ServerSelection()) {
			t.Errorf("typed, %s: %v, want %v", c.name, got, c.want && ServerSelection())
		}
	}
}

func TestSetListSelector(t *testing.T) {
	var opts metav1.ListOptions
	sel, err := FullRanges().Selector(KeyUID)
	require.NoError(t, err)
	set := SetListSelector(&opts, sel)
	require.Equal(t, ServerSelection(), set)
	if set {
		require.Equal(t, sel, ListSelector(opts))
		require.True(t, SetListSelector(&opts, ""))
	}
	require.Empty(t, ListSelector(opts))
	require.Panics(t, func() { SetListSelector(nil, sel) })
}
