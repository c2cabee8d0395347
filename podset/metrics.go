package podset

import "github.com/ctrlkit/ctrlkit/childset"

// Metrics receives the controller's own measurements, beside the work
// queue's (WithMetricsProvider). The controller calls it from its workers,
// concurrently; an implementation records into whatever metrics system the
// program uses, so this package imports none.
type Metrics interface {
	// ObserveSync reports one sync of an owner: how long it took and the
	// error it returned (nil on success).
	childset.SyncMetrics
	// ObserveDeletionAgeRatio reports, for each Ready pod chosen at a sorted
	// scale-down, its age divided by the age of the youngest Ready
	// candidate: upstream's replicaset_controller_sorting_deletion_age_ratio.
	ObserveDeletionAgeRatio(ratio float64)
}
