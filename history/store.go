package history

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
)

// Store is where an Interface built by NewHistoryFor keeps the revisions:
// the calls it makes, over one client and its cache. NewHistory's Store is
// client-go's (a clientset and a lister); ctrlruntime/crhistory has one over
// controller-runtime's client and cache. The history puts a deadline
// (WithRequestTimeout) on every call that reaches the API server, and keeps
// the rules (names, collisions, retries, ownership) to itself, so a Store
// is only its client's calls.
type Store interface {
	// List returns the cached revisions of namespace that selector matches.
	List(ctx context.Context, namespace string, selector labels.Selector) ([]*appsv1.ControllerRevision, error)
	// Cached returns the cached copy of a revision.
	Cached(ctx context.Context, namespace, name string) (*appsv1.ControllerRevision, error)
	// Get reads a revision from the API server: after a creation found its
	// name taken, the cache may not have the revision yet.
	Get(ctx context.Context, namespace, name string) (*appsv1.ControllerRevision, error)
	// Create, Update and Delete write a revision; Create and Update return
	// it as the API server stored it.
	Create(ctx context.Context, revision *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error)
	Update(ctx context.Context, revision *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error)
	Delete(ctx context.Context, namespace, name string) error
	// Patch applies a strategic-merge patch to a revision and returns it as
	// stored.
	Patch(ctx context.Context, namespace, name string, data []byte) (*appsv1.ControllerRevision, error)
}

// clientsetStore is the Store over client-go: writes through a clientset,
// reads through a lister.
type clientsetStore struct {
	client kubernetes.Interface
	lister appslisters.ControllerRevisionLister
}

func (s clientsetStore) List(_ context.Context, namespace string, selector labels.Selector) ([]*appsv1.ControllerRevision, error) {
	return s.lister.ControllerRevisions(namespace).List(selector)
}

func (s clientsetStore) Cached(_ context.Context, namespace, name string) (*appsv1.ControllerRevision, error) {
	return s.lister.ControllerRevisions(namespace).Get(name)
}

func (s clientsetStore) Get(ctx context.Context, namespace, name string) (*appsv1.ControllerRevision, error) {
	return s.client.AppsV1().ControllerRevisions(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (s clientsetStore) Create(ctx context.Context, revision *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	return s.client.AppsV1().ControllerRevisions(revision.Namespace).Create(ctx, revision, metav1.CreateOptions{})
}

func (s clientsetStore) Update(ctx context.Context, revision *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	return s.client.AppsV1().ControllerRevisions(revision.Namespace).Update(ctx, revision, metav1.UpdateOptions{})
}

func (s clientsetStore) Delete(ctx context.Context, namespace, name string) error {
	return s.client.AppsV1().ControllerRevisions(namespace).Delete(ctx, name, metav1.DeleteOptions{})
}

func (s clientsetStore) Patch(ctx context.Context, namespace, name string, data []byte) (*appsv1.ControllerRevision, error) {
	return s.client.AppsV1().ControllerRevisions(namespace).Patch(ctx, name, types.StrategicMergePatchType, data, metav1.PatchOptions{})
}
