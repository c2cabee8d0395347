package childsetcr

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/crclient"
	"github.com/ctrlkit/ctrlkit/status"
)

// ownerFields is how the host reads a user Spec's owner fields, whichever
// shape the Spec has: one Describe (describedFields) or a getter per field
// (getterFields). Both answer for a field the Spec does not give as the
// core reads a Spec without it.
type ownerFields[O client.Object] interface {
	Replicas(owner O) int32
	Selector(owner O) (labels.Selector, error)
	MinReadySeconds(owner O) int32
	RollingUpdate(owner O) (childset.RollingUpdate, bool)
	RevisionHistoryLimit(owner O) int32
	CollisionCount(owner O) *int32
	Paused(owner O) bool
	UpdateStrategy(owner O) childset.UpdateStrategy
	ProgressDeadlineSeconds(owner O) *int32
	StoredProgress(owner O) (status.ProgressCounts, []appsv1.DeploymentCondition)
	DeletionGate(owner O) childset.DeletionGate
	// statusFields is where a Describer's status is written; nil for a
	// Spec with getters, which writes its own.
	statusFields(owner O) *childset.StatusFields
}

// fieldsOf returns spec's ownerFields and whether its owners roll out; an
// error when spec gives neither a Describe nor the Replicas and Selector
// getters. A Spec with a Describe is read only through it.
func fieldsOf[O, C client.Object](spec Spec[O, C]) (ownerFields[O], bool, error) {
	switch d := spec.(type) {
	case childset.RolloutDescriber[O]:
		return describedFields[O](d.Describe), true, nil
	case childset.Describer[O]:
		return describedFields[O](func(owner O) childset.RolloutFields {
			return childset.RolloutFields{Fields: d.Describe(owner)}
		}), false, nil
	case getters[O]:
		_, rolls := spec.(childset.RolloutSpec[O])
		return getterFields[O]{d}, rolls, nil
	}
	return nil, false, fmt.Errorf("childsetcr: the Spec %T has neither a Describe method returning childset.Fields or childset.RolloutFields nor the Replicas and Selector methods", spec)
}

// getters is the Spec shape of a getter per field.
type getters[O client.Object] interface {
	Replicas(owner O) int32
	Selector(owner O) (labels.Selector, error)
}

// describedFields reads a Describer's answer, with the defaults
// childset.Fields and RolloutFields document.
type describedFields[O client.Object] func(owner O) childset.RolloutFields

func (d describedFields[O]) Replicas(owner O) int32 { return ptr.Deref(d(owner).Replicas, 1) }

func (d describedFields[O]) Selector(owner O) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(d(owner).Selector)
}

func (d describedFields[O]) MinReadySeconds(owner O) int32 { return d(owner).MinReadySeconds }

func (d describedFields[O]) RollingUpdate(owner O) (childset.RollingUpdate, bool) {
	u := d(owner).RollingUpdate
	return ptr.Deref(u, childset.RollingUpdate{}), u != nil
}

func (d describedFields[O]) RevisionHistoryLimit(owner O) int32 {
	return ptr.Deref(d(owner).RevisionHistoryLimit, childset.DefaultRevisionHistoryLimit)
}

func (d describedFields[O]) CollisionCount(owner O) *int32 {
	if st := d(owner).Status; st != nil {
		return st.CollisionCount
	}
	return nil
}

func (d describedFields[O]) Paused(owner O) bool { return d(owner).Paused }

func (d describedFields[O]) UpdateStrategy(owner O) childset.UpdateStrategy {
	return d(owner).UpdateStrategy
}

func (d describedFields[O]) ProgressDeadlineSeconds(owner O) *int32 {
	return d(owner).ProgressDeadlineSeconds
}

func (d describedFields[O]) StoredProgress(owner O) (status.ProgressCounts, []appsv1.DeploymentCondition) {
	st := d(owner).Status
	if st == nil {
		return status.ProgressCounts{}, nil
	}
	return status.ProgressCounts{Replicas: st.Replicas, UpdatedReplicas: st.UpdatedReplicas,
		ReadyReplicas: st.ReadyReplicas, AvailableReplicas: st.AvailableReplicas}, st.Conditions
}

func (d describedFields[O]) DeletionGate(owner O) childset.DeletionGate { return d(owner).DeletionGate }

func (d describedFields[O]) statusFields(owner O) *childset.StatusFields { return d(owner).Status }

// getterFields reads a Spec with a getter per field; an optional getter it
// lacks answers as the core reads a Spec without it.
type getterFields[O client.Object] struct{ getters[O] }

func (g getterFields[O]) MinReadySeconds(owner O) int32 {
	if m, ok := g.getters.(childset.MinReadySpec[O]); ok {
		return m.MinReadySeconds(owner)
	}
	return 0
}

func (g getterFields[O]) RollingUpdate(owner O) (childset.RollingUpdate, bool) {
	if r, ok := g.getters.(childset.RolloutSpec[O]); ok {
		return r.RollingUpdate(owner)
	}
	return childset.RollingUpdate{}, false
}

func (g getterFields[O]) RevisionHistoryLimit(owner O) int32 {
	if l, ok := g.getters.(childset.HistoryLimitSpec[O]); ok {
		return l.RevisionHistoryLimit(owner)
	}
	return childset.DefaultRevisionHistoryLimit
}

// CollisionCount is nil without a CollisionCountSpec, which the core reads
// as zero.
func (g getterFields[O]) CollisionCount(owner O) *int32 {
	if c, ok := g.getters.(childset.CollisionCountSpec[O]); ok {
		return c.CollisionCount(owner)
	}
	return nil
}

func (g getterFields[O]) Paused(owner O) bool {
	p, ok := g.getters.(childset.PauseSpec[O])
	return ok && p.Paused(owner)
}

// UpdateStrategy is "" (Recreate) without an UpdateStrategySpec.
func (g getterFields[O]) UpdateStrategy(owner O) childset.UpdateStrategy {
	if u, ok := g.getters.(childset.UpdateStrategySpec[O]); ok {
		return u.UpdateStrategy(owner)
	}
	return ""
}

// ProgressDeadlineSeconds is nil without a ProgressSpec: no deadline, and
// so no Progressing condition, as for a Spec without it.
func (g getterFields[O]) ProgressDeadlineSeconds(owner O) *int32 {
	if p, ok := g.getters.(childset.ProgressSpec[O]); ok {
		return p.ProgressDeadlineSeconds(owner)
	}
	return nil
}

func (g getterFields[O]) StoredProgress(owner O) (status.ProgressCounts, []appsv1.DeploymentCondition) {
	if p, ok := g.getters.(childset.ProgressSpec[O]); ok {
		return p.StoredProgress(owner)
	}
	return status.ProgressCounts{}, nil
}

// DeletionGate has no Label without a DeletionGateSpec, which the core
// reads as no gate, as for a Spec without it.
func (g getterFields[O]) DeletionGate(owner O) childset.DeletionGate {
	if d, ok := g.getters.(childset.DeletionGateSpec[O]); ok {
		return d.DeletionGate(owner)
	}
	return childset.DeletionGate{}
}

func (getterFields[O]) statusFields(O) *childset.StatusFields { return nil }

// ownerKind is spec's GroupVersionKind when it has one, and otherwise O's
// kind in scheme: only an unstructured owner needs the Spec to say it.
func ownerKind[O, C client.Object](spec Spec[O, C], scheme *runtime.Scheme) (schema.GroupVersionKind, error) {
	if k, ok := spec.(interface {
		GroupVersionKind() schema.GroupVersionKind
	}); ok {
		return k.GroupVersionKind(), nil
	}
	owner, err := newObject[O](schema.GroupVersionKind{})
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	if _, unstructured := any(owner).(runtime.Unstructured); unstructured {
		return schema.GroupVersionKind{}, errors.New("childsetcr: an unstructured owner's Spec needs a GroupVersionKind method")
	}
	gvk, err := apiutil.GVKForObject(owner, scheme)
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("childsetcr: the owner kind: %w", err)
	}
	return gvk, nil
}

// writeStatusFields writes st through a Describer's Status, on a copy of
// owner, when it changed; nothing when the Describer has no Status.
func writeStatusFields[O client.Object](ctx context.Context, fields ownerFields[O], writer client.StatusClient, owner O, st childset.Status, reread func(context.Context) (O, error)) error {
	if fields.statusFields(owner) == nil {
		return nil
	}
	_, err := crclient.UpdateStatus(ctx, writer, owner, func(o O) {
		stored := fields.statusFields(o)
		*stored = st.Fields(stored.CollisionCount)
	}, reread)
	return err
}
