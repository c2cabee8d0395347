package childsetcr

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/claim"
)

// ControllerField is the field index of children by controller reference
// that Lister reads. Its values are claim.ControllerIndexKey's, the keys
// childset.IndexerLister reads from an informer: one per owner, and one
// (the bare namespace) for the orphans of a namespace.
const ControllerField = childset.ControllerIndex

// IndexByController is ControllerField's index function, a
// client.IndexerFunc: for a manager, AddControllerIndex registers it; for
// controller-runtime's fake client, pass it to WithIndex.
func IndexByController(obj client.Object) []string {
	return []string{claim.ControllerIndexKey(obj.GetNamespace(), metav1.GetControllerOfNoCopy(obj))}
}

// indexed remembers which field indexers carry ControllerField for which
// child type: an informer refuses an index registered twice, and two
// controllers may own children of one kind (two owner kinds owning pods).
var indexed = struct {
	sync.Mutex
	done map[indexKey]bool
}{done: map[indexKey]bool{}}

type indexKey struct {
	indexer client.FieldIndexer
	child   reflect.Type
}

// AddControllerIndex registers ControllerField for children of type C on
// indexer (mgr.GetFieldIndexer()), unless this process registered it there
// already. The manager's cache asks the API server for C's resource when
// it registers an index, so SetupWithManager calls this when its controller
// starts, before its first reconcile; a controller assembled by hand may
// call it at setup, with the API server reachable.
func AddControllerIndex[C client.Object](ctx context.Context, indexer client.FieldIndexer) error {
	if indexer == nil {
		panic("childsetcr: AddControllerIndex: nil indexer")
	}
	child, err := newObject[C](schema.GroupVersionKind{})
	if err != nil {
		return err
	}
	if !reflect.TypeOf(indexer).Comparable() {
		return indexField(ctx, indexer, child)
	}
	key := indexKey{indexer: indexer, child: reflect.TypeFor[C]()}
	indexed.Lock()
	defer indexed.Unlock()
	if indexed.done[key] {
		return nil
	}
	if err := indexField(ctx, indexer, child); err != nil {
		return err
	}
	indexed.done[key] = true
	return nil
}

func indexField(ctx context.Context, indexer client.FieldIndexer, child client.Object) error {
	if err := indexer.IndexField(ctx, child, ControllerField, IndexByController); err != nil {
		return fmt.Errorf("childsetcr: indexing %T by controller: %w", child, err)
	}
	return nil
}

// Lister is a childset.Lister over a controller-runtime reader, the
// manager's cache: it lists children by ControllerField (AddControllerIndex
// must have registered it) and gets them by name. Like every cache read it
// returns copies, which the core may keep.
type Lister[C client.Object] struct {
	reader client.Reader
	list   client.ObjectList
}

var _ childset.Lister[*metav1.PartialObjectMetadata] = (*Lister[*metav1.PartialObjectMetadata])(nil)

// NewLister returns a Lister of children of type C, a pointer to a typed
// API struct registered in scheme with its list kind, read through reader.
// A nil reader or scheme panics.
func NewLister[C client.Object](reader client.Reader, scheme *runtime.Scheme) (*Lister[C], error) {
	if reader == nil || scheme == nil {
		panic("childsetcr: NewLister: nil reader or scheme")
	}
	child, err := newObject[C](schema.GroupVersionKind{})
	if err != nil {
		return nil, err
	}
	list, err := listFor(child, scheme)
	if err != nil {
		return nil, err
	}
	return &Lister[C]{reader: reader, list: list}, nil
}

// ListControlledBy implements childset.Lister: the children of namespace
// whose controller reference is controller, or its orphans when controller
// is nil.
func (l *Lister[C]) ListControlledBy(namespace string, controller *metav1.OwnerReference) ([]C, error) {
	list := l.list.DeepCopyObject().(client.ObjectList)
	// The cache's reads of a synced informer never block; the interface has
	// no context to pass.
	err := l.reader.List(context.Background(), list, client.InNamespace(namespace),
		client.MatchingFields{ControllerField: claim.ControllerIndexKey(namespace, controller)})
	if err != nil {
		return nil, fmt.Errorf("childsetcr: listing children by controller: %w", err)
	}
	return extract[C](list)
}

// Get implements childset.Lister: the child called name, and false when the
// cache has none.
func (l *Lister[C]) Get(namespace, name string) (C, bool, error) {
	var zero C
	obj, err := newObject[C](schema.GroupVersionKind{})
	if err != nil {
		return zero, false, err
	}
	err = l.reader.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, obj)
	switch {
	case apierrors.IsNotFound(err):
		return zero, false, nil
	case err != nil:
		return zero, false, fmt.Errorf("childsetcr: getting child %s/%s: %w", namespace, name, err)
	}
	return obj, true, nil
}
