package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/ctrlkit/ctrlkit/claim"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/util/retry"
)

// MaxCreateAttempts bounds how many names CreateControllerRevision tries
// before giving up with ErrTooManyCollisions. Upstream tries forever; a
// 32-bit hash colliding this often means something else is creating
// revisions under the same names.
const MaxCreateAttempts = 64

// ErrTooManyCollisions is returned (wrapped) by CreateControllerRevision
// after MaxCreateAttempts names were all taken by revisions with other data.
var ErrTooManyCollisions = errors.New("history: too many name collisions")

// Interface manages the ControllerRevisions that record a controller's
// history. Implementations treat every pointer argument as input only and
// never mutate it, except the collision count, which
// CreateControllerRevision advances on every collision.
type Interface interface {
	// ListControllerRevisions returns the revisions in parent's namespace
	// that match selector and are controlled by parent or by no controller.
	// A nil selector matches nothing.
	ListControllerRevisions(ctx context.Context, parent metav1.Object, parentKind schema.GroupVersionKind, selector labels.Selector) ([]*appsv1.ControllerRevision, error)
	// CreateControllerRevision creates revision in parent's namespace under
	// ControllerRevisionName(parent's name, HashControllerRevision(revision,
	// collisionCount)). If that name is taken by a revision with the same
	// Data.Raw, it returns that revision; if it is taken by one with other
	// data, it increments *collisionCount and tries the next name.
	// collisionCount must not be nil.
	CreateControllerRevision(ctx context.Context, parent metav1.Object, revision *appsv1.ControllerRevision, collisionCount *int32) (*appsv1.ControllerRevision, error)
	// DeleteControllerRevision deletes revision.
	DeleteControllerRevision(ctx context.Context, revision *appsv1.ControllerRevision) error
	// UpdateControllerRevision sets revision's Revision to newRevision,
	// retrying on conflicts with the cached copy. On error the returned
	// revision is not meaningful.
	UpdateControllerRevision(ctx context.Context, revision *appsv1.ControllerRevision, newRevision int64) (*appsv1.ControllerRevision, error)
	// AdoptControllerRevision makes parent the controller of the orphan
	// revision. It fails if revision already has a controller.
	AdoptControllerRevision(ctx context.Context, parent metav1.Object, parentKind schema.GroupVersionKind, revision *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error)
	// ReleaseControllerRevision removes parent's owner reference from
	// revision. A revision that is gone, or that parent no longer owns,
	// yields (nil, nil).
	ReleaseControllerRevision(ctx context.Context, parent metav1.Object, revision *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error)
}

// NewHistory returns an Interface that writes through client and lists
// through lister (and, with WithIndexer, through the controller index).
// Every request is bounded by WithRequestTimeout. client and lister must not
// be nil.
func NewHistory(client kubernetes.Interface, lister appslisters.ControllerRevisionLister, opts ...Option) Interface {
	if client == nil || lister == nil {
		panic("history: NewHistory: nil client or lister")
	}
	return NewHistoryFor(clientsetStore{client: client, lister: lister}, opts...)
}

// NewHistoryFor returns the Interface over store: the same names,
// collisions, retries and ownership rules whatever the client. A nil store
// panics.
func NewHistoryFor(store Store, opts ...Option) Interface {
	if store == nil {
		panic("history: NewHistoryFor: nil store")
	}
	return &realHistory{store: store, cfg: newConfig(opts)}
}

type realHistory struct {
	store Store
	cfg   config
}

func (h *realHistory) request(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, h.cfg.requestTimeout)
}

func (h *realHistory) ListControllerRevisions(ctx context.Context, parent metav1.Object, parentKind schema.GroupVersionKind, selector labels.Selector) ([]*appsv1.ControllerRevision, error) {
	if selector == nil {
		return nil, nil
	}
	var candidates []*appsv1.ControllerRevision
	if h.cfg.indexer != nil {
		keys := []string{
			ControllerRevisionControllerIndexKey(parent.GetNamespace(), metav1.NewControllerRef(parent, parentKind)),
			ControllerRevisionControllerIndexKey(parent.GetNamespace(), nil),
		}
		for _, key := range keys {
			objs, err := h.cfg.indexer.ByIndex(ControllerRevisionControllerIndex, key)
			if err != nil {
				return nil, fmt.Errorf("history: listing revisions of %s/%s: %w", parent.GetNamespace(), parent.GetName(), err)
			}
			for _, obj := range objs {
				if cr, ok := obj.(*appsv1.ControllerRevision); ok && selector.Matches(labels.Set(cr.Labels)) {
					candidates = append(candidates, cr)
				}
			}
		}
	} else {
		var err error
		candidates, err = h.store.List(ctx, parent.GetNamespace(), selector)
		if err != nil {
			return nil, fmt.Errorf("history: listing revisions of %s/%s: %w", parent.GetNamespace(), parent.GetName(), err)
		}
	}
	return ownedOrOrphan(candidates, parent.GetUID()), nil
}

// ownedOrOrphan keeps the revisions controlled by uid or by nobody.
func ownedOrOrphan(revisions []*appsv1.ControllerRevision, uid types.UID) []*appsv1.ControllerRevision {
	var owned []*appsv1.ControllerRevision
	for _, r := range revisions {
		if ref := metav1.GetControllerOfNoCopy(r); ref == nil || ref.UID == uid {
			owned = append(owned, r)
		}
	}
	return owned
}

func (h *realHistory) CreateControllerRevision(ctx context.Context, parent metav1.Object, revision *appsv1.ControllerRevision, collisionCount *int32) (*appsv1.ControllerRevision, error) {
	if collisionCount == nil {
		return nil, errors.New("history: CreateControllerRevision: collisionCount must not be nil")
	}
	ns := parent.GetNamespace()
	for range MaxCreateAttempts {
		// Some clients fill in what they create: each attempt sends a
		// fresh copy.
		clone := revision.DeepCopy()
		clone.Namespace = ns
		clone.ResourceVersion = ""
		clone.Name = ControllerRevisionName(parent.GetName(), HashControllerRevision(revision, collisionCount))
		created, err := h.create(ctx, clone)
		if !apierrors.IsAlreadyExists(err) {
			if err != nil {
				return nil, fmt.Errorf("history: creating revision %s/%s: %w", ns, clone.Name, err)
			}
			return created, nil
		}
		existing, err := h.get(ctx, ns, clone.Name)
		if err != nil {
			return nil, fmt.Errorf("history: reading revision %s/%s after a name collision: %w", ns, clone.Name, err)
		}
		if bytes.Equal(existing.Data.Raw, clone.Data.Raw) {
			return existing, nil
		}
		*collisionCount++
	}
	return nil, fmt.Errorf("creating a revision of %s/%s: %w (%d attempts)", ns, parent.GetName(), ErrTooManyCollisions, MaxCreateAttempts)
}

func (h *realHistory) create(ctx context.Context, cr *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	ctx, cancel := h.request(ctx)
	defer cancel()
	return h.store.Create(ctx, cr)
}

func (h *realHistory) get(ctx context.Context, ns, name string) (*appsv1.ControllerRevision, error) {
	ctx, cancel := h.request(ctx)
	defer cancel()
	return h.store.Get(ctx, ns, name)
}

func (h *realHistory) UpdateControllerRevision(ctx context.Context, revision *appsv1.ControllerRevision, newRevision int64) (*appsv1.ControllerRevision, error) {
	clone := revision.DeepCopy()
	var lastErr error
	err := wait.ExponentialBackoffWithContext(ctx, retry.DefaultBackoff, func(ctx context.Context) (bool, error) {
		if clone.Revision == newRevision {
			return true, nil
		}
		clone.Revision = newRevision
		updated, err := h.update(ctx, clone)
		if err == nil {
			clone = updated
			return true, nil
		}
		if cached, getErr := h.store.Cached(ctx, clone.Namespace, clone.Name); getErr == nil {
			clone = cached.DeepCopy()
		} else {
			// Unchanged, so the next attempt sends it again.
			clone.Revision = revision.Revision
		}
		lastErr = err
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return false, err
	})
	if wait.Interrupted(err) && lastErr != nil {
		err = lastErr
	}
	if err != nil {
		return clone, fmt.Errorf("history: updating revision %s/%s to %d: %w", revision.Namespace, revision.Name, newRevision, err)
	}
	return clone, nil
}

func (h *realHistory) update(ctx context.Context, cr *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	ctx, cancel := h.request(ctx)
	defer cancel()
	return h.store.Update(ctx, cr)
}

func (h *realHistory) DeleteControllerRevision(ctx context.Context, revision *appsv1.ControllerRevision) error {
	ctx, cancel := h.request(ctx)
	defer cancel()
	if err := h.store.Delete(ctx, revision.Namespace, revision.Name); err != nil {
		return fmt.Errorf("history: deleting revision %s/%s: %w", revision.Namespace, revision.Name, err)
	}
	return nil
}
func (h *realHistory) AdoptControllerRevision(ctx context.Context, parent metav1.Object, parentKind schema.GroupVersionKind, revision *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	if owner := metav1.GetControllerOfNoCopy(revision); owner != nil {
		return nil, fmt.Errorf("history: attempt to adopt revision %s/%s owned by %v", revision.Namespace, revision.Name, owner)
	}
	patch, err := claim.GenerateAdoptOwnerRefStrategicMergeBytes(parent, parentKind, revision.UID)
	if err != nil {
		return nil, fmt.Errorf("history: building the adoption patch of %s/%s: %w", revision.Namespace, revision.Name, err)
	}
	adopted, err := h.patch(ctx, parent.GetNamespace(), revision.Name, patch)
	if err != nil {
		return nil, fmt.Errorf("history: adopting revision %s/%s: %w", parent.GetNamespace(), revision.Name, err)
	}
	return adopted, nil
}

func (h *realHistory) ReleaseControllerRevision(ctx context.Context, parent metav1.Object, revision *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	patch, err := claim.GenerateDeleteOwnerRefStrategicMergeBytes(revision.UID, []types.UID{parent.GetUID()})
	if err != nil {
		return nil, fmt.Errorf("history: building the release patch of %s/%s: %w", revision.Namespace, revision.Name, err)
	}
	released, err := h.patch(ctx, revision.Namespace, revision.Name, patch)
	if err != nil {
		// Gone, or no longer ours (the UID precondition or the owner list
		// fails validation): there is nothing left to release.
		if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("history: releasing revision %s/%s: %w", revision.Namespace, revision.Name, err)
	}
	return released, nil
}

func (h *realHistory) patch(ctx context.Context, ns, name string, data []byte) (*appsv1.ControllerRevision, error) {
	ctx, cancel := h.request(ctx)
	defer cancel()
	return h.store.Patch(ctx, ns, name, data)
}
