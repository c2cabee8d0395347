package rolloutshape_test

import (
	"fmt"
	"time"

	"github.com/ctrlkit/ctrlkit/internal/rolloutshape"
)

func ExamplePods() {
	pods, related := rolloutshape.Pods(10_000, time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	nodes := map[string]bool{}
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			nodes[p.Spec.NodeName] = true
		}
	}
	fmt.Println(len(pods), len(related), len(nodes))
	// Output:
	// 10000 15000 500
}
