package workerset

import (
	"maps"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
	"github.com/ctrlkit/ctrlkit/status"
)

// SetAdapter tells childset what a WorkerSet wants, and what goes in its status.
type SetAdapter struct{}

// GroupVersionKind is WorkerSet's.
func (SetAdapter) GroupVersionKind() schema.GroupVersionKind {
	return GroupVersion.WithKind("WorkerSet")
}

// Replicas is spec.replicas; nil means 1.
func (SetAdapter) Replicas(s *WorkerSet) int32 { return ptr.Deref(s.Spec.Replicas, 1) }

// Selector is spec.selector; a missing one selects nothing, which childset
// refuses with an event.
func (SetAdapter) Selector(s *WorkerSet) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(s.Spec.Selector)
}

// NewChild makes a Worker from spec.template.
func (SetAdapter) NewChild(s *WorkerSet) (*Worker, error) {
	return &Worker{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      maps.Clone(s.Spec.Template.Metadata.Labels),
			Annotations: maps.Clone(s.Spec.Template.Metadata.Annotations),
		},
		Spec: s.Spec.Template.Spec,
	}, nil
}

// RollingUpdate is spec.strategy.rollingUpdate, if any.
func (SetAdapter) RollingUpdate(s *WorkerSet) (childset.RollingUpdate, bool) {
	ru := s.Spec.Strategy.RollingUpdate
	if ru == nil {
		return childset.RollingUpdate{}, false
	}
	return childset.RollingUpdate{MaxSurge: ru.MaxSurge, MaxUnavailable: ru.MaxUnavailable, Partition: ru.Partition}, true
}

// RevisionHistoryLimit is spec.revisionHistoryLimit; nil means 10.
func (SetAdapter) RevisionHistoryLimit(s *WorkerSet) int32 {
	return ptr.Deref(s.Spec.RevisionHistoryLimit, 10)
}

// CollisionCount is status.collisionCount.
func (SetAdapter) CollisionCount(s *WorkerSet) *int32 { return s.Status.CollisionCount }

// MinReadySeconds is spec.minReadySeconds.
func (SetAdapter) MinReadySeconds(s *WorkerSet) int32 { return s.Spec.MinReadySeconds }

// Paused is spec.paused.
func (SetAdapter) Paused(s *WorkerSet) bool { return s.Spec.Paused }

// ProgressDeadlineSeconds is spec.progressDeadlineSeconds.
func (SetAdapter) ProgressDeadlineSeconds(s *WorkerSet) *int32 { return s.Spec.ProgressDeadlineSeconds }

// StoredProgress is the status as last written: its counts and conditions.
func (SetAdapter) StoredProgress(s *WorkerSet) (status.ProgressCounts, []appsv1.DeploymentCondition) {
	st := s.Status
	return status.ProgressCounts{Replicas: st.Replicas, UpdatedReplicas: st.UpdatedReplicas,
		ReadyReplicas: st.ReadyReplicas, AvailableReplicas: st.AvailableReplicas}, st.Conditions
}

// SetStatus copies what the sync saw into the status; childsetcr writes it
// when it changed. The collision count is the one the rollout reports, and
// is kept as it was while the WorkerSet does not roll out.
func (SetAdapter) SetStatus(s *WorkerSet, st childset.Status) {
	collisions := s.Status.CollisionCount
	if st.UpdateRevision != "" {
		collisions = &st.CollisionCount
	}
	s.Status = WorkerSetStatus{ObservedGeneration: st.ObservedGeneration, Replicas: st.Replicas,
		ReadyReplicas: st.ReadyReplicas, AvailableReplicas: st.AvailableReplicas, UpdatedReplicas: st.UpdatedReplicas,
		CurrentReplicas: st.CurrentReplicas, TerminatingReplicas: st.TerminatingReplicas,
		CurrentRevision: st.CurrentRevision, UpdateRevision: st.UpdateRevision, CollisionCount: collisions,
		Conditions: st.Conditions}
}

// WorkerAdapter tells childset which Workers are ready: the ones deleted
// last on a scale-down.
type WorkerAdapter struct{}

// Ready is status.ready.
func (WorkerAdapter) Ready(w *Worker) bool { return w.Status.Ready }

// ReadySince is status.readySince: with minReadySeconds, a ready Worker
// whose agent does not report it never counts as available.
func (WorkerAdapter) ReadySince(w *Worker) time.Time {
	if w.Status.ReadySince == nil {
		return time.Time{}
	}
	return w.Status.ReadySince.Time
}

// Controller is the WorkerSet controller in a manager.
type Controller = childsetcr.Reconciler[*WorkerSet, *Worker]

// SetupWithManager adds the WorkerSet controller, named "workerset", to
// mgr, whose scheme must hold AddToScheme's types. Its RBAC: WorkerSets
// (and their status) and Workers, and apps/controllerrevisions (get, list,
// watch, create, update, patch, delete) for the rollout history. opts come after the
// name, so a WithName among them wins.
func SetupWithManager(mgr ctrl.Manager, opts ...childsetcr.Option) (*Controller, error) {
	return childsetcr.SetupWithManager[*WorkerSet, *Worker](mgr, SetAdapter{}, WorkerAdapter{},
		append([]childsetcr.Option{childsetcr.WithName("workerset")}, opts...)...)
}
