package syncloop

import (
	"strings"
	"testing"
	"time"

	"k8s.io/utils/clock"
)

// TestOptions: the setters set, the driver-only ones are refused outside
// New's driver and named in the order given, and Configure hands the
// timings and workers to the loop.
func TestOptions(t *testing.T) {
	o := DefaultOptions()
	for _, set := range []Set{
		Clock(nil), Workers("pkg", 3), QueueName("pkg", "q"), Metrics(nil), DrainTimeout("pkg", 0),
		StaleCachePoll("pkg", time.Minute), UnreachableBackoffCap("pkg", time.Hour),
	} {
		set(&o)
	}
	var l Loop
	o.Configure(&l)
	if l.Clock != (clock.RealClock{}) || l.Workers != 3 || l.DrainTimeout != 0 || l.StaleCachePoll != time.Minute || l.UnreachableBackoffCap != time.Hour {
		t.Errorf("workers %d, drain %v, poll %v, cap %v", l.Workers, l.DrainTimeout, l.StaleCachePoll, l.UnreachableBackoffCap)
	}
	func() {
		defer func() {
			msg, _ := recover().(string)
			want := "pkg: NewReconciler: WithQueueName, WithMetricsProvider, WithDrainTimeout, WithUnreachableBackoffCap configure New's driver"
			if !strings.HasPrefix(msg, want) {
				t.Errorf("panic %q, want %q...", msg, want)
			}
		}()
		o.RefuseDriverOnly("pkg")
	}()
	Driven(&o)
	o.RefuseDriverOnly("pkg") // New's driver applies them all
}
