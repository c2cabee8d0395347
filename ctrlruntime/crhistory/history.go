package crhistory

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlkit/ctrlkit/history"
)

// New returns a history.Interface that writes through c and reads through
// cache (the manager's cache; nil means c): history's own rules over a
// Store of controller-runtime's calls. A nil c panics.
func New(c client.Client, cache client.Reader, opts ...Option) history.Interface {
	if c == nil {
		panic("crhistory: New: nil client")
	}
	if cache == nil {
		cache = c
	}
	cfg := newConfig(opts)
	live := cfg.live
	if live == nil {
		live = cache
	}
	return history.NewHistoryFor(Store{Client: c, Cache: cache, Live: live}, history.WithRequestTimeout(cfg.requestTimeout))
}

// Store is a history.Store over controller-runtime: writes through Client,
// lists and cached reads through Cache, and the read after a name collision
// through Live (the manager's API reader: the cache may not have seen the
// revision a previous sync created).
type Store struct {
	Client client.Client
	Cache  client.Reader
	Live   client.Reader
}

var _ history.Store = Store{}

// List implements history.Store.
func (s Store) List(ctx context.Context, namespace string, selector labels.Selector) ([]*appsv1.ControllerRevision, error) {
	var list appsv1.ControllerRevisionList
	if err := s.Cache.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return nil, err
	}
	out := make([]*appsv1.ControllerRevision, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// Cached implements history.Store.
func (s Store) Cached(ctx context.Context, namespace, name string) (*appsv1.ControllerRevision, error) {
	return get(ctx, s.Cache, namespace, name)
}

// Get implements history.Store.
func (s Store) Get(ctx context.Context, namespace, name string) (*appsv1.ControllerRevision, error) {
	return get(ctx, s.Live, namespace, name)
}

func get(ctx context.Context, r client.Reader, namespace, name string) (*appsv1.ControllerRevision, error) {
	rev := &appsv1.ControllerRevision{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, rev); err != nil {
		return nil, err
	}
	return rev, nil
}

// Create implements history.Store; the client fills revision in.
func (s Store) Create(ctx context.Context, revision *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	if err := s.Client.Create(ctx, revision); err != nil {
		return nil, err
	}
	return revision, nil
}

// Update implements history.Store; the client fills revision in.
func (s Store) Update(ctx context.Context, revision *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	if err := s.Client.Update(ctx, revision); err != nil {
		return nil, err
	}
	return revision, nil
}

// Delete implements history.Store.
func (s Store) Delete(ctx context.Context, namespace, name string) error {
	return s.Client.Delete(ctx, &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}})
}

// Patch implements history.Store.
func (s Store) Patch(ctx context.Context, namespace, name string, data []byte) (*appsv1.ControllerRevision, error) {
	rev := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := s.Client.Patch(ctx, rev, client.RawPatch(types.StrategicMergePatchType, data)); err != nil {
		return nil, err
	}
	return rev, nil
}
