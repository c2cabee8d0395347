package childset

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/claim"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// Object is what an owner and a child are: an API object with metadata.
type Object = objectcontrol.Object

// Spec is the owner adapter: what the core needs to know about an owner of
// type O whose children are of type C. Implement it on a named type.
type Spec[O Object, C Object] interface {
	// Get returns the owner from the informer cache; an error satisfying
	// apierrors.IsNotFound means the owner is gone.
	Get(namespace, name string) (O, error)
	// GroupVersionKind is the owner's kind, written into controller
	// references.
	GroupVersionKind() schema.GroupVersionKind
	// Replicas is how many children the owner wants; below zero counts as zero.
	Replicas(owner O) int32
	// Selector selects the owner's children.
	Selector(owner O) (labels.Selector, error)
	// NewChild builds a child to create for owner: its labels (which the
	// selector must match), annotations and spec. The core sets the name
	// (or generateName), namespace and controller reference on a copy.
	NewChild(owner O) (C, error)
}

// Kind is the child adapter.
type Kind[C Object] interface {
	Lister[C]
	// Ready reports whether a child is ready; the default deletion order
	// deletes children that are not ready first.
	Ready(child C) bool
}

// Lister reads children from an informer cache.
type Lister[C Object] interface {
	// ListControlledBy returns the children of namespace whose controller
	// reference is controller, or the orphans of namespace when controller
	// is nil.
	ListControlledBy(namespace string, controller *metav1.OwnerReference) ([]C, error)
	// Get returns the child called name, and false when the cache has none.
	Get(namespace, name string) (C, bool, error)
}

// ControllerIndex is the index IndexerLister reads: children by their
// controller reference (claim.IndexByController).
const ControllerIndex = "ctrlkit.io/childset-controller"

// AddControllerIndexer registers ControllerIndex on a child informer, unless
// it has it already. Call it before the informer starts.
func AddControllerIndexer(informer cache.SharedIndexInformer) error {
	return claim.AddControllerIndexer(informer, ControllerIndex)
}

// IndexerLister returns a Lister over an indexer that carries
// ControllerIndex (see AddControllerIndexer, or add claim.IndexByController
// under that name to a cache.NewIndexer). Objects of another type than C in
// the indexer are an error.
func IndexerLister[C Object](indexer cache.Indexer) Lister[C] {
	if indexer == nil {
		panic("childset: IndexerLister: nil indexer")
	}
	return indexerLister[C]{indexer: indexer}
}

type indexerLister[C Object] struct{ indexer cache.Indexer }

func (l indexerLister[C]) ListControlledBy(namespace string, controller *metav1.OwnerReference) ([]C, error) {
	objs, err := l.indexer.ByIndex(ControllerIndex, claim.ControllerIndexKey(namespace, controller))
	if err != nil {
		return nil, fmt.Errorf("reading child index: %w", err)
	}
	out := make([]C, 0, len(objs))
	for _, obj := range objs {
		c, ok := obj.(C)
		if !ok {
			var zero C
			return nil, fmt.Errorf("child index holds a %T, not a %T", obj, zero)
		}
		out = append(out, c)
	}
	return out, nil
}

func (l indexerLister[C]) Get(namespace, name string) (C, bool, error) {
	var zero C
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	obj, ok, err := l.indexer.GetByKey(key)
	if err != nil || !ok {
		if apierrors.IsNotFound(err) {
			err = nil
		}
		return zero, false, err
	}
	c, isC := obj.(C)
	if !isC {
		return zero, false, fmt.Errorf("child store holds a %T, not a %T", obj, zero)
	}
	return c, true, nil
}
