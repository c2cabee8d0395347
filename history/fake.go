package history

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
	appsinformers "k8s.io/client-go/informers/apps/v1"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
)

var revisionResource = appsv1.Resource("controllerrevisions")

// NewFakeHistory returns an Interface for tests that reads and writes the
// informer's store directly, with no API server. Creation handles name
// collisions like NewHistory: a taken name with the same Data.Raw returns the
// stored revision, other data advances the collision count.
func NewFakeHistory(informer appsinformers.ControllerRevisionInformer) Interface {
	if informer == nil {
		panic("history: NewFakeHistory: nil informer")
	}
	return &fakeHistory{indexer: informer.Informer().GetIndexer(), lister: informer.Lister()}
}

type fakeHistory struct {
	indexer cache.Indexer
	lister  appslisters.ControllerRevisionLister
}

func (f *fakeHistory) ListControllerRevisions(_ context.Context, parent metav1.Object, _ schema.GroupVersionKind, selector labels.Selector) ([]*appsv1.ControllerRevision, error) {
	if selector == nil {
		return nil, nil
	}
	all, err := f.lister.ControllerRevisions(parent.GetNamespace()).List(selector)
	if err != nil {
		return nil, fmt.Errorf("history: listing revisions of %s/%s: %w", parent.GetNamespace(), parent.GetName(), err)
	}
	return ownedOrOrphan(all, parent.GetUID()), nil
}

// stored returns the stored copy of revision, or a NotFound error.
func (f *fakeHistory) stored(revision *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	key, err := cache.MetaNamespaceKeyFunc(revision)
	if err != nil {
		return nil, err
	}
	obj, found, err := f.indexer.GetByKey(key)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, apierrors.NewNotFound(revisionResource, revision.Name)
	}
	cr, ok := obj.(*appsv1.ControllerRevision)
	if !ok {
		return nil, fmt.Errorf("history: %s holds a %T, not a ControllerRevision", key, obj)
	}
	return cr, nil
}

func (f *fakeHistory) CreateControllerRevision(_ context.Context, parent metav1.Object, revision *appsv1.ControllerRevision, collisionCount *int32) (*appsv1.ControllerRevision, error) {
	if collisionCount == nil {
		return nil, errors.New("history: CreateControllerRevision: collisionCount must not be nil")
	}
	clone := revision.DeepCopy()
	clone.Namespace = parent.GetNamespace()
	for range MaxCreateAttempts {
		clone.Name = ControllerRevisionName(parent.GetName(), HashControllerRevision(revision, collisionCount))
		existing, err := f.stored(clone)
		if apierrors.IsNotFound(err) {
			return clone, f.indexer.Add(clone)
		}
		if err != nil {
			return nil, err
		}
		if bytes.Equal(existing.Data.Raw, clone.Data.Raw) {
			return existing, nil
		}
		*collisionCount++
	}
	return nil, fmt.Errorf("creating a revision of %s/%s: %w (%d attempts)", parent.GetNamespace(), parent.GetName(), ErrTooManyCollisions, MaxCreateAttempts)
}

func (f *fakeHistory) DeleteControllerRevision(_ context.Context, revision *appsv1.ControllerRevision) error {
	existing, err := f.stored(revision)
	if err != nil {
		return err
	}
	return f.indexer.Delete(existing)
}

func (f *fakeHistory) UpdateControllerRevision(_ context.Context, revision *appsv1.ControllerRevision, newRevision int64) (*appsv1.ControllerRevision, error) {
	clone := revision.DeepCopy()
	clone.Revision = newRevision
	return clone, f.indexer.Update(clone)
}

func (f *fakeHistory) AdoptControllerRevision(_ context.Context, parent metav1.Object, parentKind schema.GroupVersionKind, revision *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	if owner := metav1.GetControllerOfNoCopy(revision); owner != nil {
		return nil, fmt.Errorf("history: attempt to adopt revision %s/%s owned by %v", revision.Namespace, revision.Name, owner)
	}
	if _, err := f.stored(revision); err != nil {
		return nil, err
	}
	clone := revision.DeepCopy()
	clone.OwnerReferences = append(clone.OwnerReferences, *metav1.NewControllerRef(parent, parentKind))
	return clone, f.indexer.Update(clone)
}

func (f *fakeHistory) ReleaseControllerRevision(_ context.Context, parent metav1.Object, revision *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	if _, err := f.stored(revision); apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	clone := revision.DeepCopy()
	clone.OwnerReferences = nil
	for _, ref := range revision.OwnerReferences {
		if ref.UID != parent.GetUID() {
			clone.OwnerReferences = append(clone.OwnerReferences, ref)
		}
	}
	return clone, f.indexer.Update(clone)
}
