package parity

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/ctrlkit/ctrlkit/shard"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
)

// These checks need apimachinery's pkg/sharding, which arrived in v0.36,
// above the library module's floor, so they live here rather than beside
// the shard package.

func shardRandomUID(r *rand.Rand) string {
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&(1<<48-1))
}

// shard.Hash must be the API server's hash, or client-side filtering and the
// server's shardRange() disagree about which object belongs where.
func TestParityShardHash(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	inputs := []string{"", "a", "default", "kube-system", "ünïcødé"}
	for range 500 {
		inputs = append(inputs, shardRandomUID(r))
	}
	for _, s := range inputs {
		server, err := strconv.ParseUint(sharding.HashField(s), 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got := shard.Hash(s); got != server {
			t.Fatalf("Hash(%q) = %#x, apimachinery sharding.HashField says %#x", s, got, server)
		}
	}
}

// A share's selector must be written exactly as the API server writes it
// back in ShardInfo, and select exactly what Ranges.Contains selects.
func TestParityShardSelector(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	members := []string{"a", "b", "c", "d", "e"}
	for trial := range 20 {
		ring := members[:1+trial%len(members)]
		share := shard.Assign(ring, shard.WithSlots(16+trial))[ring[0]]
		var reqs []sharding.ShardRangeRequirement
		for _, rg := range share {
			lo, hi := rg.Bounds()
			reqs = append(reqs, sharding.ShardRangeRequirement{Key: string(shard.KeyUID), Start: lo, End: hi})
		}
		server := sharding.NewSelector(reqs...)
		ours, err := share.Selector(shard.KeyUID)
		if err != nil {
			t.Fatal(err)
		}
		if ours != server.String() {
			t.Fatalf("selector %q, apimachinery writes %q", ours, server.String())
		}
		for range 500 {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(shardRandomUID(r))}}
			want, err := server.Matches(pod)
			if err != nil {
				t.Fatal(err)
			}
			h, _ := shard.HashObject(pod, shard.KeyUID)
			if share.Contains(h) != want {
				t.Fatalf("uid %s (hash %#x): Contains %v, the server's selector %v", pod.UID, h, !want, want)
			}
		}
	}
}

// The libraries e2e builds with (v0.36 and later) carry server-side
// selection; shard finds its fields by name, so a rename would silently turn
// it off.
func TestParityShardServerSelection(t *testing.T) {
	if !shard.ServerSelection() {
		t.Fatal("shard finds no ListOptions.ShardSelector or ListMeta.ShardInfo in these libraries")
	}
	var opts metav1.ListOptions
	shard.SetListSelector(&opts, "x")
	if opts.ShardSelector != "x" {
		t.Fatalf("SetListSelector set %q", opts.ShardSelector)
	}
	list := &v1.PodList{ListMeta: metav1.ListMeta{ShardInfo: &metav1.ShardInfo{Selector: "y"}}}
	if sel, ok := shard.EchoedSelector(list); !ok || sel != "y" {
		t.Fatalf("EchoedSelector = %q, %v", sel, ok)
	}
}
