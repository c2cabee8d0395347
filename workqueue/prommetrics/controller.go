package prommetrics

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"

	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/podcontrol"
)

// The controller's metric names: sync outcomes as controller-runtime names
// them, the deletion-age ratio as upstream's ReplicaSet controller does, so
// dashboards built for either read a ctrlkit controller too, and the pod
// writes, which neither has, under ctrlkit's own prefix.
const (
	ReconcileTotalName       = "controller_runtime_reconcile_total"
	ReconcileErrorsName      = "controller_runtime_reconcile_errors_total"
	ReconcileTimeName        = "controller_runtime_reconcile_time_seconds"
	DeletionAgeRatioName     = "replicaset_controller_sorting_deletion_age_ratio"
	PodsCreatedName          = "ctrlkit_controller_pods_created_total"
	PodsDeletedName          = "ctrlkit_controller_pods_deleted_total"
	ControllerLabel          = "controller"
	ResultLabel              = "result"
	ResultSuccess            = "success"
	ResultRequeue            = "requeue"
	ResultError              = "error"
	deletionAgeRatioHelpText = "The ratio of chosen deleted pod's ages to the current youngest pod's age (at the time). Should be <2. " +
		"The intent of this metric is to measure the rough efficacy of the LogarithmicScaleDown feature gate's effect on " +
		"the sorting (and deletion) of pods when a replicaset scales down. This only considers Ready pods when calculating and reporting."
)

// ControllerMetrics records a set controller's own measurements: it
// implements podset.Metrics (sync outcomes and times, the deletion-age
// ratio), and counts the pods the controller created and deleted through
// RecordPodWrites. Each series is labelled by the controller, the owner
// kind in lower case ("replicaset").
type ControllerMetrics struct {
	syncs, syncErrors        *prometheus.CounterVec
	syncTime                 *prometheus.HistogramVec
	ageRatio                 prometheus.Histogram
	podsCreated, podsDeleted *prometheus.CounterVec
}

// NewControllerMetrics registers the controller's metrics on reg. As with
// NewProvider, a second one on the same registry shares the first's; it
// fails when reg holds a different metric under one of the names. A nil
// reg panics.
func NewControllerMetrics(reg prometheus.Registerer) (*ControllerMetrics, error) {
	if reg == nil {
		panic("prommetrics: NewControllerMetrics: nil registerer; pass prometheus.DefaultRegisterer for the global registry")
	}
	controller := []string{ControllerLabel}
	counter := func(name, help string, labels ...string) (*prometheus.CounterVec, error) {
		return register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels))
	}
	m := &ControllerMetrics{}
	var err error
	if m.syncs, err = counter(ReconcileTotalName, "Total number of syncs per controller and result (success, requeue or error).", ControllerLabel, ResultLabel); err != nil {
		return nil, err
	}
	if m.syncErrors, err = counter(ReconcileErrorsName, "Total number of syncs per controller that returned an error.", ControllerLabel); err != nil {
		return nil, err
	}
	if m.syncTime, err = register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: ReconcileTimeName, Help: "Length of time per sync per controller.", Buckets: prometheus.DefBuckets,
	}, controller)); err != nil {
		return nil, err
	}
	// Upstream's help and buckets too.
	if m.ageRatio, err = register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: DeletionAgeRatioName, Help: deletionAgeRatioHelpText, Buckets: prometheus.ExponentialBuckets(0.25, 2, 6),
	})); err != nil {
		return nil, err
	}
	if m.podsCreated, err = counter(PodsCreatedName, "Total number of pods the controller created, per controller.", ControllerLabel); err != nil {
		return nil, err
	}
	if m.podsDeleted, err = counter(PodsDeletedName, "Total number of pods the controller deleted, per controller.", ControllerLabel); err != nil {
		return nil, err
	}
	return m, nil
}

// SyncResult is the result label of a sync that returned err. A sync that
// found the informer cache behind the controller's own writes
// (consistency.ErrStaleCache) did nothing wrong: it waits for the cache and
// is requeued, so it is no failure.
func SyncResult(err error) string {
	switch {
	case err == nil:
		return ResultSuccess
	case consistency.IsStaleCache(err):
		return ResultRequeue
	default:
		return ResultError
	}
}

// ObserveSync counts one sync of an owner of kind by result, and its
// duration; only real failures count as errors.
func (m *ControllerMetrics) ObserveSync(kind string, took time.Duration, err error) {
	controller := strings.ToLower(kind)
	result := SyncResult(err)
	if result == ResultError {
		m.syncErrors.WithLabelValues(controller).Inc()
	}
	m.syncs.WithLabelValues(controller, result).Inc()
	m.syncTime.WithLabelValues(controller).Observe(took.Seconds())
}

// ObserveDeletionAgeRatio records one Ready victim's age ratio.
func (m *ControllerMetrics) ObserveDeletionAgeRatio(r float64) { m.ageRatio.Observe(r) }

// RecordPodWrites returns a recorder that passes every event on to next
// and counts the pods the controller created and deleted, labelled
// controller, by the events podcontrol records once per successful write
// (SuccessfulCreate, SuccessfulDelete): those events are exactly the
// record of the writes, and counting them needs no hook in the controller.
func (m *ControllerMetrics) RecordPodWrites(next record.EventRecorder, controller string) record.EventRecorder {
	if next == nil {
		panic("prommetrics: RecordPodWrites: nil recorder")
	}
	return podWriteCounter{next: next, created: m.podsCreated.WithLabelValues(controller), deleted: m.podsDeleted.WithLabelValues(controller)}
}

type podWriteCounter struct {
	next             record.EventRecorder
	created, deleted prometheus.Counter
}

func (r podWriteCounter) Event(object runtime.Object, eventtype, reason, message string) {
	r.count(reason)
	r.next.Event(object, eventtype, reason, message)
}

func (r podWriteCounter) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	r.count(reason)
	r.next.Eventf(object, eventtype, reason, messageFmt, args...)
}

func (r podWriteCounter) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any) {
	r.count(reason)
	r.next.AnnotatedEventf(object, annotations, eventtype, reason, messageFmt, args...)
}

func (r podWriteCounter) count(reason string) {
	switch reason {
	case podcontrol.SuccessfulCreatePodReason:
		r.created.Inc()
	case podcontrol.SuccessfulDeletePodReason:
		r.deleted.Inc()
	}
}
