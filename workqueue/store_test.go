package workqueue

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStoreRandomized checks the store against a map through growth, heavy
// deletion and node reuse.
func TestStoreRandomized(t *testing.T) {
	for _, keys := range []int{10, 1000, 20000} {
		var s store[int]
		s.init()
		want := map[int]int32{}
		r := rand.New(rand.NewPCG(uint64(keys), 7))
		for range 20 * keys {
			k := r.IntN(keys) * 1024
			i, n := s.find(k)
			wi, present := want[k]
			require.Equal(t, present, n != nil, "key %d", k)
			if present {
				require.Equal(t, wi, i)
				require.Equal(t, k, n.item)
			}
			switch {
			case !present:
				i, n, ok := s.insert(k)
				require.True(t, ok)
				n.state = stQueued
				want[k] = i
			case r.IntN(2) == 0:
				s.release(i, n)
				delete(want, k)
			}
			require.Equal(t, len(want), s.len())
		}
		for k, i := range want {
			j, n := s.find(k)
			require.Equal(t, i, j)
			require.Equal(t, k, n.item)
		}
		require.LessOrEqual(t, int(s.used), 2*keys, "freed nodes are reused")
	}
}
