package childsetcr

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/crclient"
	"github.com/ctrlkit/ctrlkit/status"
)

// A Spec the host completes with Get must keep the optional interfaces the
// core looks for on it (status, minReadySeconds, scale-in by name,
// deletion gates, rolling updates), or a user's UpdateStatus would silently
// never run. cachedSpec implements the status, minReadySeconds, scale-in
// and deletion gate ones, whose absence and a neutral answer mean the same
// to the core, reading the fields through ownerFields whichever shape the
// user's Spec has; RolloutSpec cannot be offered that way (the core needs
// WithRevisions exactly when a Spec implements it), so a Spec that rolls
// out is wrapped once more, in rollingSpec.

// hostedSpec is what cachedSpec and liveSpec offer the core.
type hostedSpec[O, C client.Object] interface {
	childset.Spec[O, C]
	childset.StatusSpec[O]
	childset.MinReadySpec[O]
	childset.ScaleInSpec[O]
	childset.DeletionGateSpec[O]
	childset.DeletionReleaser[O, C]
	childset.LiveReader[O]
}

// rollingSpec is a hostedSpec whose user Spec rolls out. It answers the
// optional history limit, collision count, pause, update strategy and
// progress deadline,
// whose absence and a neutral answer mean the same to the core.
type rollingSpec[O, C client.Object] struct {
	hostedSpec[O, C]
	fields ownerFields[O]
}

func (s rollingSpec[O, C]) RollingUpdate(owner O) (childset.RollingUpdate, bool) {
	return s.fields.RollingUpdate(owner)
}

func (s rollingSpec[O, C]) RevisionHistoryLimit(owner O) int32 {
	return s.fields.RevisionHistoryLimit(owner)
}

func (s rollingSpec[O, C]) CollisionCount(owner O) *int32 { return s.fields.CollisionCount(owner) }

func (s rollingSpec[O, C]) Paused(owner O) bool { return s.fields.Paused(owner) }

func (s rollingSpec[O, C]) UpdateStrategy(owner O) childset.UpdateStrategy {
	return s.fields.UpdateStrategy(owner)
}

func (s rollingSpec[O, C]) ProgressDeadlineSeconds(owner O) *int32 {
	return s.fields.ProgressDeadlineSeconds(owner)
}

func (s rollingSpec[O, C]) StoredProgress(owner O) (status.ProgressCounts, []appsv1.DeploymentCondition) {
	return s.fields.StoredProgress(owner)
}

// completeSpec returns spec as the core's Spec: spec itself when it is a
// whole childset.Spec (it has a Get of its own); otherwise spec, of kind
// gvk, reading owners through cache, and live (nil: cache) before an
// adoption.
func completeSpec[O, C client.Object](spec Spec[O, C], gvk schema.GroupVersionKind, cache, live client.Reader, status client.StatusClient) (childset.Spec[O, C], error) {
	if full, ok := spec.(childset.Spec[O, C]); ok {
		return full, nil
	}
	fields, rolls, err := fieldsOf(spec)
	if err != nil {
		return nil, err
	}
	cached := cachedSpec[O, C]{Spec: spec, fields: fields, gvk: gvk, reader: cache, status: status, reread: cache}
	var hosted hostedSpec[O, C] = cached
	if live != nil {
		cached.reread = live
		hosted = liveSpec[O, C]{cached, live}
	}
	if rolls {
		return rollingSpec[O, C]{hosted, fields}, nil
	}
	return hosted, nil
}

// rollsOut reports whether the core's Spec rolls out, and so needs
// WithRevisions.
func rollsOut[O, C client.Object](spec childset.Spec[O, C]) bool {
	_, rolls := spec.(childset.RolloutSpec[O])
	return rolls
}

// UpdateStatus forwards to the user's StatusSpec, writes what its
// StatusSetter sets (crclient.UpdateStatus), or writes the status through
// its Describe's Status; without any of them it writes nothing, as the
// core does.
func (s cachedSpec[O, C]) UpdateStatus(ctx context.Context, owner O, st childset.Status) error {
	reread := func(ctx context.Context) (O, error) {
		return s.read(ctx, s.reread, owner.GetNamespace(), owner.GetName())
	}
	switch user := s.Spec.(type) {
	case childset.StatusSpec[O]:
		return user.UpdateStatus(ctx, owner, st)
	case StatusSetter[O]:
		_, err := crclient.UpdateStatus(ctx, s.status, owner, func(o O) { user.SetStatus(o, st) }, reread)
		return err
	}
	return writeStatusFields(ctx, s.fields, s.status, owner, st, reread)
}

// MinReadySeconds is the user's, or 0, as the core reads a Spec without it.
func (s cachedSpec[O, C]) MinReadySeconds(owner O) int32 { return s.fields.MinReadySeconds(owner) }

// ChildrenToDeleteFirst forwards to the user's ScaleInSpec; without one it
// names nothing, which the core reads as a Spec without it.
func (s cachedSpec[O, C]) ChildrenToDeleteFirst(owner O) []string {
	if named, ok := s.Spec.(childset.ScaleInSpec[O]); ok {
		return named.ChildrenToDeleteFirst(owner)
	}
	return nil
}

// DeletionGate is the user's DeletionGateSpec's, or its Describe's
// DeletionGate; without either it has no Label, which the core reads as no
// gate.
func (s cachedSpec[O, C]) DeletionGate(owner O) childset.DeletionGate {
	return s.fields.DeletionGate(owner)
}

// DeletionReleased forwards to the user's DeletionReleaser; without one a
// marked child waits for its label, as the core has it for a Spec without
// it.
func (s cachedSpec[O, C]) DeletionReleased(owner O, child C) bool {
	r, ok := s.Spec.(childset.DeletionReleaser[O, C])
	return ok && r.DeletionReleased(owner, child)
}

// GetLive, for a cachedSpec, reads the cache again: with no live reader the
// cached owner decides, as it does in the core.
func (s cachedSpec[O, C]) GetLive(ctx context.Context, namespace, name string) (O, error) {
	return s.read(ctx, s.reader, namespace, name)
}

// checkRevisionScheme refuses a scheme without ControllerRevisions: the
// history of an owner that rolls out is kept in them.
func checkRevisionScheme(scheme *runtime.Scheme) error {
	if !scheme.Recognizes(appsv1.SchemeGroupVersion.WithKind("ControllerRevision")) {
		return fmt.Errorf("childsetcr: the Spec rolls out (childset.RolloutSpec), and the scheme lacks apps/v1 ControllerRevision: add appsv1.AddToScheme")
	}
	return nil
}
