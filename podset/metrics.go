package podset

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/ctrlkit/ctrlkit/podstate"
)

// Metrics receives the controller's own measurements, beside the work
// queue's (WithMetricsProvider). The controller calls it from its workers,
// concurrently; an implementation records into whatever metrics system the
// program uses, so this package imports none.
type Metrics interface {
	// ObserveSync reports one sync of an owner of kind: how long it took and
	// the error it returned (nil on success).
	ObserveSync(kind string, took time.Duration, err error)
	// ObserveDeletionAgeRatio reports, for each Ready pod chosen at a sorted
	// scale-down, its age divided by the age of the youngest Ready
	// candidate: upstream's replicaset_controller_sorting_deletion_age_ratio.
	ObserveDeletionAgeRatio(ratio float64)
}

// observeDeletionAgeRatio reports the age of each Ready victim relative to
// the youngest Ready candidate, as upstream does after sorting. Upstream
// divides whole milliseconds as integers, which truncates the ratio and
// panics when the youngest Ready pod is less than a millisecond old; here the
// ratio is a float and nothing is observed when the youngest age is not
// positive.
func (c *Reconciler[O]) observeDeletionAgeRatio(candidates, victims []*v1.Pod) {
	if c.cfg.syncMetrics == nil {
		return
	}
	var youngest time.Time
	for _, pod := range candidates {
		if t := pod.CreationTimestamp.Time; t.After(youngest) && podstate.IsReady(pod) {
			youngest = t
		}
	}
	now := c.cfg.Clock.Now()
	youngestAge := now.Sub(youngest)
	if youngest.IsZero() || youngestAge <= 0 {
		return
	}
	for _, pod := range victims {
		if !podstate.IsReady(pod) {
			continue
		}
		c.cfg.syncMetrics.ObserveDeletionAgeRatio(float64(now.Sub(pod.CreationTimestamp.Time)) / float64(youngestAge))
	}
}
