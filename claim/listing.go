package claim

import (
	"fmt"
	"hash/maphash"
	"reflect"
	"slices"
	"sync/atomic"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
)

// A controller's sync lists its children by controller reference, and on a
// steady owner that listing is the same from one sync to the next. Reading
// it from the store is still a map lookup per child (the index holds keys,
// not objects), which on an owner synced for something else (an annotation,
// a resync, an event storm) is most of the sync. IndexListing keeps the last
// listing of one index key and proves, without reading the store, that no
// object filed under the key was added, changed or removed since.
//
// The proof has two parts.
//
//   - IndexByController advances a clock for every key it files an object
//     under. A store calls its index functions under its write lock, on the
//     old and the new object of every add, update and delete, so a read of
//     the clock before the store is read, and again before the listing is
//     reused, differs whenever the key's objects changed in between. The
//     clocks live in one table shared by every store of the process, keys
//     hashed into it: a key shares its clock with others, which only makes
//     a listing look changed when it is not.
//   - A store's Replace (a relist) re-files every object it keeps and drops
//     the others without calling the index function on them, so a key
//     whose objects all went away does not advance. The listing therefore
//     also checks that its first object is still in the store, the same
//     object: informers store a new object for every change, and an object
//     kept across a Replace was re-filed under the key, advancing it.
//
// The witness is checked before the clock: an object found unchanged at
// that instant means every Replace before it was seen, and a clock
// unchanged after it means every other mutation was. The listing returned
// is the key's objects as the store held them at the instant of the
// witness check.
type IndexListing[T any] struct {
	indexer    cache.Indexer // nil: nothing kept
	name, key  string
	clock      uint64
	objs       []T
	witnessKey string // the store key of objs[0]
	witness    any    // objs[0] as the store held it
}

// AppendTo appends to dst the objects indexer files under key in its index
// name, as ByIndex returns them, and keeps them for the next call. A later
// call with the same indexer, name and key appends the kept objects without
// reading the store when none of them changed. Only an index whose function
// is IndexByController (AddControllerIndexer) is kept; any other is read
// from the store every time. Objects of another type than T are left out
// and reported (utilruntime.HandleError). The caller owns the returned
// slice; the listing is one caller's, not safe for concurrent use.
func (l *IndexListing[T]) AppendTo(dst []T, indexer cache.Indexer, name, key string) ([]T, error) {
	if l.current(indexer, name, key) {
		return append(dst, l.objs...), nil
	}
	*l = IndexListing[T]{}
	clocked := isIndexByController(indexer, name)
	clock := indexClock(key) // before the store is read
	start := len(dst)
	dst, err := AppendByIndex(dst, indexer, name, key)
	if err != nil || !clocked {
		return dst, err
	}
	*l = IndexListing[T]{indexer: indexer, name: name, key: key, clock: clock, objs: slices.Clone(dst[start:])}
	if len(l.objs) > 0 {
		// Stores hold pointers; an object of any other type is never kept,
		// as it could not be told apart from an equal copy.
		l.witness = any(l.objs[0])
		l.witnessKey, err = cache.MetaNamespaceKeyFunc(l.witness)
		if err != nil || reflect.TypeOf(l.witness).Kind() != reflect.Pointer {
			*l = IndexListing[T]{}
		}
	}
	return dst, nil
}

// Current reports whether the listing keeps objects and they are still
// those of its key, as a call of AppendTo would find: a holder of many
// listings drops those that are not, which would otherwise keep objects
// the store let go (the children of a deleted owner).
func (l *IndexListing[T]) Current() bool {
	return l.current(l.indexer, l.name, l.key)
}

// current reports whether the kept objects are still the key's, witness
// first, then clock (see IndexListing).
func (l *IndexListing[T]) current(indexer cache.Indexer, name, key string) bool {
	if l.indexer == nil || l.indexer != indexer || l.name != name || l.key != key {
		return false
	}
	if l.witness != nil {
		obj, ok, err := indexer.GetByKey(l.witnessKey)
		if err != nil || !ok || obj != l.witness {
			return false
		}
	}
	return indexClock(key) == l.clock
}

// AppendByIndex appends to dst the objects indexer files under key in its
// index name (ByIndex), leaving out and reporting objects of another type
// than T.
func AppendByIndex[T any](dst []T, indexer cache.Indexer, name, key string) ([]T, error) {
	objs, err := indexer.ByIndex(name, key)
	if err != nil {
		return dst, fmt.Errorf("reading index %q: %w", name, err)
	}
	dst = slices.Grow(dst, len(objs))
	for _, obj := range objs {
		t, ok := obj.(T)
		if !ok {
			utilruntime.HandleError(fmt.Errorf("unexpected object type in index %q: %T", name, obj))
			continue
		}
		dst = append(dst, t)
	}
	return dst, nil
}

// isIndexByController reports whether indexer's index name is
// IndexByController, the only index function that advances the clocks.
func isIndexByController(indexer cache.Indexer, name string) bool {
	fn, ok := indexer.GetIndexers()[name]
	return ok && fn != nil && reflect.ValueOf(fn).Pointer() == reflect.ValueOf(IndexByController).Pointer()
}

// indexClocks is the clock table of IndexListing: a key's clock is the
// slot its hash picks. 16,384 slots keep unrelated owners apart in all but
// the largest clusters, in 128 KiB of memory the process touches only
// where it files objects.
var (
	indexClocks    [1 << 14]atomic.Uint64
	indexClockSeed = maphash.MakeSeed()
)

func indexClockSlot(key string) *atomic.Uint64 {
	return &indexClocks[maphash.String(indexClockSeed, key)&(uint64(len(indexClocks))-1)]
}

// tickIndexClock advances key's clock; indexClock reads it.
func tickIndexClock(key string)    { indexClockSlot(key).Add(1) }
func indexClock(key string) uint64 { return indexClockSlot(key).Load() }
