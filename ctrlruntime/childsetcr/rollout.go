package childsetcr

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/crclient"
	"github.com/ctrlkit/ctrlkit/status"
)

// A Spec the host completes with Get must keep the optional interfaces the
// core looks for on it (status, minReadySeconds, scale-in by name, rolling
// updates), or a user's UpdateStatus would silently never run. cachedSpec
// forwards the status, minReadySeconds and scale-in ones, whose absence and
// a neutral answer mean the same to the core; RolloutSpec cannot be forwarded that way (the core
// needs WithRevisions exactly when a Spec implements it), so a Spec that
// rolls out is wrapped once more, in rollingSpec.

// hostedSpec is what cachedSpec and liveSpec offer the core.
type hostedSpec[O, C client.Object] interface {
	childset.Spec[O, C]
	childset.StatusSpec[O]
	childset.MinReadySpec[O]
	childset.ScaleInSpec[O]
	childset.LiveReader[O]
}

// rollingSpec is a hostedSpec whose user Spec rolls out. It forwards the
// optional history limit, collision count, pause and progress deadline,
// whose absence and a neutral answer mean the same to the core.
type rollingSpec[O, C client.Object] struct {
	hostedSpec[O, C]
	childset.RolloutSpec[O]
}

// RevisionHistoryLimit forwards to the user's HistoryLimitSpec; without one
// it is the core's default.
func (s rollingSpec[O, C]) RevisionHistoryLimit(owner O) int32 {
	if l, ok := s.RolloutSpec.(childset.HistoryLimitSpec[O]); ok {
		return l.RevisionHistoryLimit(owner)
	}
	return childset.DefaultRevisionHistoryLimit
}

// CollisionCount forwards to the user's CollisionCountSpec; without one it
// is nil, which the core reads as zero.
func (s rollingSpec[O, C]) CollisionCount(owner O) *int32 {
	if c, ok := s.RolloutSpec.(childset.CollisionCountSpec[O]); ok {
		return c.CollisionCount(owner)
	}
	return nil
}

// Paused forwards to the user's PauseSpec; without one no owner is paused.
func (s rollingSpec[O, C]) Paused(owner O) bool {
	p, ok := s.RolloutSpec.(childset.PauseSpec[O])
	return ok && p.Paused(owner)
}

// ProgressDeadlineSeconds forwards to the user's ProgressSpec; without one
// there is no deadline, and the core then reports no Progressing
// condition, as for a Spec without it.
func (s rollingSpec[O, C]) ProgressDeadlineSeconds(owner O) *int32 {
	if p, ok := s.RolloutSpec.(childset.ProgressSpec[O]); ok {
		return p.ProgressDeadlineSeconds(owner)
	}
	return nil
}

// StoredProgress forwards to the user's ProgressSpec; without one the
// status holds nothing the core reads.
func (s rollingSpec[O, C]) StoredProgress(owner O) (status.ProgressCounts, []appsv1.DeploymentCondition) {
	if p, ok := s.RolloutSpec.(childset.ProgressSpec[O]); ok {
		return p.StoredProgress(owner)
	}
	return status.ProgressCounts{}, nil
}

// completeSpec returns spec as the core's Spec: spec itself when it has a
// Get of its own; otherwise spec reading owners through cache, and live
// (nil: cache) before an adoption.
func completeSpec[O, C client.Object](spec Spec[O, C], cache, live client.Reader, status client.StatusClient) childset.Spec[O, C] {
	if full, ok := spec.(childset.Spec[O, C]); ok {
		return full
	}
	cached := cachedSpec[O, C]{Spec: spec, reader: cache, status: status, reread: cache}
	var hosted hostedSpec[O, C] = cached
	if live != nil {
		cached.reread = live
		hosted = liveSpec[O, C]{cached, live}
	}
	if rolls, ok := spec.(childset.RolloutSpec[O]); ok {
		return rollingSpec[O, C]{hosted, rolls}
	}
	return hosted
}

// UpdateStatus forwards to the user's StatusSpec, or writes what its
// StatusSetter sets (crclient.UpdateStatus); without either it writes
// nothing, as the core does.
func (s cachedSpec[O, C]) UpdateStatus(ctx context.Context, owner O, st childset.Status) error {
	switch user := s.Spec.(type) {
	case childset.StatusSpec[O]:
		return user.UpdateStatus(ctx, owner, st)
	case StatusSetter[O]:
		_, err := crclient.UpdateStatus(ctx, s.status, owner, func(o O) { user.SetStatus(o, st) },
			func(ctx context.Context) (O, error) {
				return s.read(ctx, s.reread, owner.GetNamespace(), owner.GetName())
			})
		return err
	}
	return nil
}

// MinReadySeconds forwards to the user's MinReadySpec; without one it is 0,
// as the core reads a Spec without it.
func (s cachedSpec[O, C]) MinReadySeconds(owner O) int32 {
	if m, ok := s.Spec.(childset.MinReadySpec[O]); ok {
		return m.MinReadySeconds(owner)
	}
	return 0
}

// ChildrenToDeleteFirst forwards to the user's ScaleInSpec; without one it
// names nothing, which the core reads as a Spec without it.
func (s cachedSpec[O, C]) ChildrenToDeleteFirst(owner O) []string {
	if named, ok := s.Spec.(childset.ScaleInSpec[O]); ok {
		return named.ChildrenToDeleteFirst(owner)
	}
	return nil
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
