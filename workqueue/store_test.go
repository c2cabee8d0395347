package workqueue

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStoreRandomized checks the hash table against a map through growth
// and heavy deletion (backward shifts), with keys that collide often in the
// low bits.
func TestStoreRandomized(t *testing.T) {
	for _, keys := range []int{10, 1000, 20000} {
		var s store[int]
		s.init()
		want := map[int]int32{}
		r := rand.New(rand.NewPCG(uint64(keys), 7))
		for range 20 * keys {
			k := r.IntN(keys) * 1024
			h, slot, i, n := s.find(k)
			wi, present := want[k]
			require.Equal(t, present, n != nil, "key %d", k)
			if present {
				require.Equal(t, wi, i)
				require.Equal(t, k, n.item)
			}
			switch {
			case !present:
				i, n, ok := s.insert(k, h, slot)
				require.True(t, ok)
				n.state = stQueued
				want[k] = i
			case r.IntN(2) == 0:
				s.release(slot, i, n)
				delete(want, k)
			}
			require.Equal(t, len(want), s.len())
		}
		for k, i := range want {
			j, n := s.lookup(k)
			require.Equal(t, i, j)
			require.Equal(t, uint32(slotIndexOf(&s, k)), s.slotOf(i, n))
		}
		require.LessOrEqual(t, s.count*4, len(s.slots)*3, "load stays under 3/4")
	}
}

func slotIndexOf(s *store[int], k int) uint32 {
	_, slot, _, _ := s.find(k)
	return slot
}
