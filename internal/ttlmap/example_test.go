package ttlmap_test

import (
	"fmt"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/ctrlkit/ctrlkit/internal/ttlmap"
)

type record struct{ setAt time.Duration }

func Example() {
	fc := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	clk := ttlmap.NewClock(fc)
	table := ttlmap.New[string](time.Minute, 4, func(r *record) time.Duration { return r.setAt })

	table.Put("ns/web@1", &record{setAt: clk.Now()})
	fc.SetTime(fc.Now().Add(2 * time.Minute))
	_, state := table.Lookup("ns/web@1", clk.Now())
	fmt.Println(state == ttlmap.Expired, table.Len())
	// Output: true 0
}
