package childset

import (
	"fmt"
	"maps"
	"slices"
	"sync"

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
// the indexer are an error. It keeps the last listing of each key
// (claim.IndexListing), so that listing an owner whose children did not
// change reads nothing from the store and returns them in the order it
// did before, which lets the core's claim reuse its last result whole.
func IndexerLister[C Object](indexer cache.Indexer) Lister[C] {
	if indexer == nil {
		panic("childset: IndexerLister: nil indexer")
	}
	return indexerLister[C]{indexer: indexer, listings: &listings{}}
}

type indexerLister[C Object] struct {
	indexer  cache.Indexer
	listings *listings
}

func (l indexerLister[C]) ListControlledBy(namespace string, controller *metav1.OwnerReference) ([]C, error) {
	key := claim.ControllerIndexKey(namespace, controller)
	kept := l.listings.get(key)
	kept.mu.Lock()
	defer kept.mu.Unlock()
	objs, err := kept.listing.AppendTo(kept.scratch[:0], l.indexer, ControllerIndex, key)
	// The scratch space is emptied, so that it holds no object past this
	// read, and kept for the next.
	defer func() { clear(objs); kept.scratch = objs[:0] }()
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

// listings keeps the last listing of each index key an IndexerLister read.
// A listing is dropped once it is no longer current (its key changed, or a
// relist emptied it): each read checks one other listing, in turn, so that
// those of deleted owners, whose children went away, do not keep those
// children in memory.
type listings struct {
	mu    sync.Mutex
	byKey map[string]*keptListing
	// toCheck holds the keys still to check in this turn over byKey.
	toCheck []string
}

// keptListing is one key's listing. Its lock is held for a read: a
// listing serves one caller at a time, and the same key (a namespace's
// orphans) may be read by several workers.
type keptListing struct {
	mu      sync.Mutex
	listing claim.IndexListing[any]
	// scratch is the space a read lists into before checking the
	// objects' type: a listing of 10,000 children is 160 KiB that every
	// steady sync would otherwise allocate and leave to the collector.
	scratch []any
}

// get returns key's listing, making it if needed, and checks another.
func (ls *listings) get(key string) *keptListing {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	kept, ok := ls.byKey[key]
	if !ok {
		if ls.byKey == nil {
			ls.byKey = map[string]*keptListing{}
		}
		kept = &keptListing{}
		ls.byKey[key] = kept
	}
	ls.checkOne(key)
	return kept
}

// checkOne drops the next listing in turn, other than skip's, that is not
// current. One being read is left for the next turn.
func (ls *listings) checkOne(skip string) {
	if len(ls.toCheck) == 0 {
		ls.toCheck = slices.AppendSeq(ls.toCheck, maps.Keys(ls.byKey))
	}
	key := ls.toCheck[len(ls.toCheck)-1]
	ls.toCheck = ls.toCheck[:len(ls.toCheck)-1]
	kept, ok := ls.byKey[key]
	if key == skip || !ok || !kept.mu.TryLock() {
		return
	}
	current := kept.listing.Current()
	kept.mu.Unlock()
	if !current {
		delete(ls.byKey, key)
	}
}

func (l indexerLister[C]) Get(namespace, name string) (C, bool, error) {
	var zero C
	obj, ok, err := l.indexer.GetByKey(cache.NewObjectName(namespace, name).String())
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
