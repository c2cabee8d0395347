package childset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/history"
)

// UpdateStrategy is how a rollout brings a child of an old revision to
// the update revision.
type UpdateStrategy string

const (
	// Recreate deletes the old child and creates another: the default.
	Recreate UpdateStrategy = "Recreate"
	// InPlaceIfPossible updates the child in place when the Kind can
	// (InPlaceKind), and recreates it otherwise.
	InPlaceIfPossible UpdateStrategy = "InPlaceIfPossible"
	// InPlaceOnly updates the child in place when the Kind can, and
	// otherwise leaves it at its revision, with a Warning event
	// (ReasonInPlaceUpdateRefused).
	InPlaceOnly UpdateStrategy = "InPlaceOnly"
)

// ReasonInPlaceUpdateRefused is the Warning event of an owner whose
// InPlaceOnly rollout leaves children at an old revision, because the
// change cannot be made in place.
const ReasonInPlaceUpdateRefused = "InPlaceUpdateRefused"

// UpdateStrategySpec is implemented by a RolloutSpec whose owners choose
// how their children move to a new revision. An unknown strategy, like
// none, is Recreate.
//
// In place, an old child the rollout would replace is updated instead,
// bounded as a replacement is: maxUnavailable and the partition hold, and
// the update counts as unavailable until the Kind reports it done
// (InPlaceKind.InPlaceDone). The child then carries the update revision's
// label. A rollback is a rollout to an earlier revision, in place the same
// way.
type UpdateStrategySpec[O Object] interface {
	UpdateStrategy(owner O) UpdateStrategy
}

// InPlaceKind is implemented by a Kind whose children can move from one
// revision to another without being replaced.
type InPlaceKind[C Object] interface {
	// InPlaceUpdate returns the patches that bring a child built from
	// from (its revision's child) to what to builds (the update
	// revision's), applied in order; ok false means the difference cannot
	// be made in place. from and to are templates, as Spec.NewChild
	// built them, not live objects: compare them, not the child.
	InPlaceUpdate(from, to C) (patches []InPlacePatch, ok bool)
	// InPlaceDone reports whether child runs what its object asks (for a
	// pod: every container at its image, running and ready, and no resize
	// pending). A child updated in place is unavailable until it is.
	InPlaceDone(child C) bool
}

// InPlacePatch is one write of an in-place update.
type InPlacePatch struct {
	// Subresource is the subresource patched ("resize" for a pod's
	// resources), or "" for the object itself.
	Subresource string
	// Type is the patch's type.
	Type types.PatchType
	// Data is the patch.
	Data []byte
}

// inPlaceUpdater is the in-place part of a writer: a patch of a type and
// subresource of the caller's choosing. objectcontrol.Control is one.
type inPlaceUpdater[C Object] interface {
	PatchSubresource(ctx context.Context, namespace, name, subresource string, patchType types.PatchType, data []byte) (C, error)
}

// updateStrategy is owner's strategy, Recreate without an in-place Kind.
func (r *Reconciler[O, C]) updateStrategy(owner O) UpdateStrategy {
	spec, ok := r.spec.(UpdateStrategySpec[O])
	if !ok || r.inPlace == nil {
		return Recreate
	}
	switch s := spec.UpdateStrategy(owner); s {
	case InPlaceIfPossible, InPlaceOnly:
		return s
	}
	return Recreate
}

// inPlacePlans is what one sync knows of updating its old children in
// place: the patches from each old revision to the update revision, by the
// old revision's hash, nil when that one cannot be.
type inPlacePlans[C Object] struct {
	byHash map[string][]InPlacePatch
}

// patchesFor returns the patches from the revision c is at to the update
// revision, and whether there are any: a revision the history no longer
// has, or whose template does not decode, is recreated.
func (r *Reconciler[O, C]) patchesFor(ro *rollout[C], plans *inPlacePlans[C], c C) ([]InPlacePatch, bool) {
	hash := childHash(c)
	if patches, seen := plans.byHash[hash]; seen {
		return patches, patches != nil
	}
	var patches []InPlacePatch
	if rev := revisionWithHash(ro.revisions, hash); rev != nil {
		if from, err := decodeTemplate(rev, ro.template); err == nil {
			if p, ok := r.inPlace.InPlaceUpdate(from, ro.template); ok {
				// Not nil, even without a patch: nil says "cannot".
				patches = append([]InPlacePatch{}, p...)
			}
		}
	}
	if plans.byHash == nil {
		plans.byHash = map[string][]InPlacePatch{}
	}
	plans.byHash[hash] = patches
	return patches, patches != nil
}

func revisionWithHash(revisions []*appsv1.ControllerRevision, hash string) *appsv1.ControllerRevision {
	for _, rev := range revisions {
		if revisionHash(rev) == hash {
			return rev
		}
	}
	return nil
}

// updateInPlace applies the Kind's patches to each of children, then
// labels it with the update revision; the label goes last, so a child
// whose update failed halfway is still old and planned again. A child
// whose update the API server refuses as invalid or forbidden is not
// updated in place again for this revision, with a Warning; refused says
// so, and the owner is to be looked at again at once, to recreate it or
// leave it as the strategy says.
func (r *Reconciler[O, C]) updateInPlace(ctx context.Context, owner O, expKey string, ro *rollout[C], plans *inPlacePlans[C], children []C) (refused bool, err error) {
	writer, ok := r.writer.w.(inPlaceUpdater[C])
	if !ok {
		return false, errors.New("the writer cannot update children in place (it has no PatchSubresource)")
	}
	label, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{
		history.ControllerRevisionHashLabel: revisionHash(ro.update)}}})
	if err != nil {
		return false, err
	}
	var errs []error
	for _, c := range children {
		patches, _ := r.patchesFor(ro, plans, c)
		patches = append(patches[:len(patches):len(patches)], InPlacePatch{Type: types.MergePatchType, Data: label})
		r.inFlight.add(expKey, c.GetName(), revisionHash(ro.update), r.cfg.Clock.Now())
		for _, p := range patches {
			obj, err := r.writer.call(ctx, "updating "+c.GetNamespace()+"/"+c.GetName()+" in place", func(ctx context.Context) (C, error) {
				return writer.PatchSubresource(ctx, c.GetNamespace(), c.GetName(), p.Subresource, p.Type, p.Data)
			})
			if err != nil {
				r.inFlight.drop(expKey, c.GetName())
				if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
					// The API server will not take this update for this
					// child (a pod on a node that cannot resize): retrying
					// cannot help, so it counts as impossible in place.
					r.refusedInPlace.add(expKey, c.GetName(), revisionHash(ro.update), r.cfg.Clock.Now())
					r.warn(owner, ReasonInPlaceUpdateRefused, "Cannot update %s in place: %v", c.GetName(), err)
					refused = true
					break
				}
				errs = append(errs, fmt.Errorf("updating %s in place: %w", c.GetName(), err))
				break
			}
			if !isNil(obj) {
				r.wrote(expKey, obj)
			}
		}
	}
	return refused, errors.Join(errs...)
}

// refuseInPlace records the Warning of an InPlaceOnly owner whose old
// children cannot be updated in place.
func (r *Reconciler[O, C]) refuseInPlace(owner O, n int, update *appsv1.ControllerRevision) {
	if r.cfg.recorder != nil && n > 0 {
		r.cfg.recorder.Eventf(owner, v1.EventTypeWarning, ReasonInPlaceUpdateRefused,
			"%d children cannot be updated in place to revision %s, and the update strategy is InPlaceOnly: they stay at their revision",
			n, update.Name)
	}
}

// inFlight remembers, per owner, the children this replica updated in
// place until its cache shows them at the revision they were updated to,
// so that a sync on a cache that lags counts them as updated and
// unavailable, not as old ones to update again. A record expires after
// the expectations' TTL, as an expectation does.
type inFlight struct {
	mu     sync.Mutex
	ttl    time.Duration
	owners map[string]map[string]inFlightUpdate
}

type inFlightUpdate struct {
	hash string
	at   time.Time
}

func (f *inFlight) add(owner, child, hash string, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.owners == nil {
		f.owners = map[string]map[string]inFlightUpdate{}
	}
	if f.owners[owner] == nil {
		f.owners[owner] = map[string]inFlightUpdate{}
	}
	f.owners[owner][child] = inFlightUpdate{hash: hash, at: now}
}

func (f *inFlight) drop(owner, child string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.owners[owner], child)
	if len(f.owners[owner]) == 0 {
		delete(f.owners, owner)
	}
}

// forget drops every record of the owner with work key key, whatever its
// UID (records are kept by expectations.OwnerKeyFor).
func (f *inFlight) forget(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for owner := range f.owners {
		if owner == key || strings.HasPrefix(owner, key+"@") {
			delete(f.owners, owner)
		}
	}
}

// holds reports whether a record of child of owner for hash is kept and
// not expired.
func (f *inFlight) holds(owner, child, hash string, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	u, ok := f.owners[owner][child]
	return ok && u.hash == hash && now.Sub(u.at) <= f.ttl
}

// updating reports whether child of owner, showing hash in the cache, was
// updated in place to another revision this replica is still to see; a
// record the cache caught up with, or that expired, is dropped.
func (f *inFlight) updating(owner, child, hash string, now time.Time) (to string, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	u, ok := f.owners[owner][child]
	if !ok {
		return "", false
	}
	if u.hash == hash || now.Sub(u.at) > f.ttl {
		delete(f.owners[owner], child)
		return "", false
	}
	return u.hash, true
}
