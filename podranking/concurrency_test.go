package podranking

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
)

// TestSelectorConcurrent runs one Selector from several goroutines, so the
// sticky scratch and the pool are both exercised, and checks every caller
// gets the same answer as a serial call.
func TestSelectorConcurrent(t *testing.T) {
	defer goleak.VerifyNone(t)
	sel := NewSelector(WithNow(testNow))
	inputs := make([][]*v1.Pod, 4)
	want := make([][]*v1.Pod, len(inputs))
	for i := range inputs {
		inputs[i] = genPods(newRand(uint64(100+i)), 300+i*50, testNow, genConfig{nodes: 7, distinct: true})
		want[i] = sel.PodsToDelete(inputs[i], inputs[i], 40)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for r := 0; r < 20; r++ {
				i := (g + r) % len(inputs)
				assert.Equal(t, names(want[i]), names(sel.PodsToDelete(inputs[i], inputs[i], 40)))
			}
		}(g)
	}
	wg.Wait()
}
