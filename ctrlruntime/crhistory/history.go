package crhistory

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlkit/ctrlkit/claim"
	"github.com/ctrlkit/ctrlkit/history"
)

// History is a history.Interface over a controller-runtime client.
type History struct {
	client client.Client
	cache  client.Reader
	cfg    config
}

var _ history.Interface = (*History)(nil)

// New returns a History that writes through c and lists through cache
// (the manager's cache; nil means c). A nil c panics.
func New(c client.Client, cache client.Reader, opts ...Option) *History {
	if c == nil {
		panic("crhistory: New: nil client")
	}
	if cache == nil {
		cache = c
	}
	h := &History{client: c, cache: cache, cfg: newConfig(opts)}
	if h.cfg.live == nil {
		h.cfg.live = cache
	}
	return h
}

func (h *History) request(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, h.cfg.requestTimeout)
}

// ListControllerRevisions implements history.Interface: the revisions of
// parent's namespace that selector matches and that parent or nobody
// controls. A nil selector matches nothing.
func (h *History) ListControllerRevisions(ctx context.Context, parent metav1.Object, _ schema.GroupVersionKind, selector labels.Selector) ([]*appsv1.ControllerRevision, error) {
	if selector == nil {
		return nil, nil
	}
	var list appsv1.ControllerRevisionList
	if err := h.cache.List(ctx, &list, client.InNamespace(parent.GetNamespace()), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return nil, fmt.Errorf("crhistory: listing revisions of %s/%s: %w", parent.GetNamespace(), parent.GetName(), err)
	}
	var out []*appsv1.ControllerRevision
	for i := range list.Items {
		rev := &list.Items[i]
		if ref := metav1.GetControllerOfNoCopy(rev); ref == nil || ref.UID == parent.GetUID() {
			out = append(out, rev)
		}
	}
	return out, nil
}

// CreateControllerRevision implements history.Interface: revision is
// created under the name its hash and *collisionCount give; a name taken
// by the same data is that revision, one taken by other data advances
// *collisionCount, up to history.MaxCreateAttempts names.
func (h *History) CreateControllerRevision(ctx context.Context, parent metav1.Object, revision *appsv1.ControllerRevision, collisionCount *int32) (*appsv1.ControllerRevision, error) {
	if collisionCount == nil {
		return nil, errors.New("crhistory: CreateControllerRevision: collisionCount must not be nil")
	}
	ns := parent.GetNamespace()
	for range history.MaxCreateAttempts {
		// The client fills in what it creates, so each attempt sends a fresh copy.
		clone := revision.DeepCopy()
		clone.Namespace = ns
		clone.ResourceVersion = ""
		clone.Name = history.ControllerRevisionName(parent.GetName(), history.HashControllerRevision(revision, collisionCount))
		err := h.create(ctx, clone)
		if err == nil {
			return clone, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("crhistory: creating revision %s/%s: %w", ns, clone.Name, err)
		}
		existing, err := h.get(ctx, ns, clone.Name)
		if err != nil {
			return nil, fmt.Errorf("crhistory: reading revision %s/%s after a name collision: %w", ns, clone.Name, err)
		}
		if bytes.Equal(existing.Data.Raw, clone.Data.Raw) {
			return existing, nil
		}
		*collisionCount++
	}
	return nil, fmt.Errorf("crhistory: creating a revision of %s/%s: %w (%d attempts)", ns, parent.GetName(), history.ErrTooManyCollisions, history.MaxCreateAttempts)
}

func (h *History) create(ctx context.Context, rev *appsv1.ControllerRevision) error {
	ctx, cancel := h.request(ctx)
	defer cancel()
	return h.client.Create(ctx, rev)
}

func (h *History) get(ctx context.Context, ns, name string) (*appsv1.ControllerRevision, error) {
	ctx, cancel := h.request(ctx)
	defer cancel()
	rev := &appsv1.ControllerRevision{}
	if err := h.cfg.live.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rev); err != nil {
		return nil, err
	}
	return rev, nil
}

// DeleteControllerRevision implements history.Interface. A NotFound error
// is returned wrapped, so apierrors.IsNotFound still tells it.
func (h *History) DeleteControllerRevision(ctx context.Context, revision *appsv1.ControllerRevision) error {
	ctx, cancel := h.request(ctx)
	defer cancel()
	target := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: revision.Namespace, Name: revision.Name}}
	if err := h.client.Delete(ctx, target); err != nil {
		return fmt.Errorf("crhistory: deleting revision %s/%s: %w", revision.Namespace, revision.Name, err)
	}
	return nil
}

// UpdateControllerRevision implements history.Interface: it sets
// Revision to newRevision, and on a conflict takes the cache's copy and
// tries again, with retry.DefaultBackoff.
func (h *History) UpdateControllerRevision(ctx context.Context, revision *appsv1.ControllerRevision, newRevision int64) (*appsv1.ControllerRevision, error) {
	clone := revision.DeepCopy()
	var lastErr error
	err := wait.ExponentialBackoffWithContext(ctx, retry.DefaultBackoff, func(ctx context.Context) (bool, error) {
		if clone.Revision == newRevision {
			return true, nil
		}
		clone.Revision = newRevision
		err := h.update(ctx, clone)
		if err == nil {
			return true, nil
		}
		lastErr = err
		if !apierrors.IsConflict(err) {
			return false, err
		}
		fresh := &appsv1.ControllerRevision{}
		if getErr := h.cache.Get(ctx, client.ObjectKeyFromObject(clone), fresh); getErr == nil {
			clone = fresh
		} else {
			clone.Revision = revision.Revision // unchanged, so the loop sends it again
		}
		return false, nil
	})
	if wait.Interrupted(err) && lastErr != nil {
		err = lastErr
	}
	if err != nil {
		return nil, fmt.Errorf("crhistory: updating revision %s/%s to %d: %w", revision.Namespace, revision.Name, newRevision, err)
	}
	return clone, nil
}

func (h *History) update(ctx context.Context, rev *appsv1.ControllerRevision) error {
	ctx, cancel := h.request(ctx)
	defer cancel()
	return h.client.Update(ctx, rev)
}

// AdoptControllerRevision implements history.Interface with the strategic
// merge patch claim builds, the revision's UID as its precondition.
func (h *History) AdoptControllerRevision(ctx context.Context, parent metav1.Object, parentKind schema.GroupVersionKind, revision *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	if owner := metav1.GetControllerOfNoCopy(revision); owner != nil {
		return nil, fmt.Errorf("crhistory: attempt to adopt revision %s/%s owned by %v", revision.Namespace, revision.Name, owner)
	}
	data, err := claim.GenerateAdoptOwnerRefStrategicMergeBytes(parent, parentKind, revision.UID)
	if err != nil {
		return nil, fmt.Errorf("crhistory: building the adoption patch of %s/%s: %w", revision.Namespace, revision.Name, err)
	}
	adopted, err := h.patch(ctx, parent.GetNamespace(), revision.Name, data)
	if err != nil {
		return nil, fmt.Errorf("crhistory: adopting revision %s/%s: %w", parent.GetNamespace(), revision.Name, err)
	}
	return adopted, nil
}

// ReleaseControllerRevision implements history.Interface: a revision gone,
// or that parent no longer owns, yields (nil, nil).
func (h *History) ReleaseControllerRevision(ctx context.Context, parent metav1.Object, revision *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	data, err := claim.GenerateDeleteOwnerRefStrategicMergeBytes(revision.UID, []types.UID{parent.GetUID()})
	if err != nil {
		return nil, fmt.Errorf("crhistory: building the release patch of %s/%s: %w", revision.Namespace, revision.Name, err)
	}
	released, err := h.patch(ctx, revision.Namespace, revision.Name, data)
	if err != nil {
		// Gone, or no longer ours (the UID precondition fails validation).
		if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("crhistory: releasing revision %s/%s: %w", revision.Namespace, revision.Name, err)
	}
	return released, nil
}

func (h *History) patch(ctx context.Context, ns, name string, data []byte) (*appsv1.ControllerRevision, error) {
	ctx, cancel := h.request(ctx)
	defer cancel()
	rev := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := h.client.Patch(ctx, rev, client.RawPatch(types.StrategicMergePatchType, data)); err != nil {
		return nil, err
	}
	return rev, nil
}
