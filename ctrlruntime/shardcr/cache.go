package shardcr

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/shard"
)

// NewInformerFunc is the type of controller-runtime's cache.Options.NewInformer.
type NewInformerFunc = func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer

// CacheFilter keeps only this replica's share in the manager's cache, so
// that the cache's memory, not only the work, divides over the replicas.
// controller-runtime builds each informer's ListerWatcher itself, but hands
// it to cache.Options.NewInformer; CacheFilter.NewInformer goes there and
// wraps the ListerWatcher of the kinds registered with Owners and Children:
//
//   - Lists and watches carry ListOptions.ShardSelector for the share
//     (owners by the sharding's key; children only by namespace, the
//     server cannot hash a controller reference), where the Kubernetes
//     libraries have the field (shard.ServerSelection, v0.36 on); before,
//     every share is filtered on the client as below.
//   - A list whose answer does not echo that selector in its ShardInfo
//     (shard.ServerFiltered; the ShardedListAndWatch gate is off) is
//     filtered on the client, and so is every watch event: an object
//     outside the share never reaches the store. A transform cannot do
//     this (it must return an object), which is why the filter sits in the
//     ListerWatcher.
//   - An object that leaves the share in a watch (a child whose controller
//     reference moved) is turned into a deletion, if the store had it.
//   - When the share changes, the running watch ends with a 410 Expired
//     error, which makes the informer's reflector list again with the new
//     share, as a consistent read (shard.SetConsistentRead); its Replace
//     deletes what left and adds what arrived, and the handlers see those
//     as deletions and creations. A share that becomes empty (a Lease not
//     renewed in time) keeps the cache as it is: the fence already stops
//     the work, and the share that follows a lapse is usually the same one.
//   - Covers tells when every narrowed informer has taken in a list of a
//     share holding a hash; the sharding's Reconciler waits for it, since
//     the informers relist one by one and an owner could otherwise reach
//     the cache before its children.
//
// Orphan children stay in every replica's cache: any replica's owner may
// adopt them. Kinds not registered get controller-runtime's informers
// unchanged. The filter is the cache's, not one controller's: every reader
// of the manager's cache sees only the share of the registered kinds, and
// one cache serves one ring and key. Label and field selectors of
// cache.Options.ByObject still apply (controller-runtime sets them inside
// the ListerWatcher wrapped here), and so do transforms, which run after
// the filter. A Member's share is empty until it joined, so informers
// started before list nothing and fill once the share arrives.
type CacheFilter struct {
	sharding *Sharding
	scheme   *runtime.Scheme
	roles    map[schema.GroupKind]bool // true: owners, false: children
	next     NewInformerFunc

	mu      sync.Mutex
	tracked []*shardedListWatch // the narrowed informers, for Covers
}

// NewCacheFilter returns a filter for sharding, resolving kinds in scheme
// (the manager's). next builds the informers (nil means client-go's
// NewSharedIndexInformer, controller-runtime's default). A nil sharding or
// scheme panics.
func NewCacheFilter(sharding *Sharding, scheme *runtime.Scheme, next NewInformerFunc) *CacheFilter {
	if sharding == nil || scheme == nil {
		panic("shardcr: NewCacheFilter: nil sharding or scheme")
	}
	if next == nil {
		next = toolscache.NewSharedIndexInformer
	}
	f := &CacheFilter{sharding: sharding, scheme: scheme, roles: map[schema.GroupKind]bool{}, next: next}
	// The sharding's Reconciler waits for this cache to show a hash in
	// full before it works on an owner there.
	sharding.addCoverage(f.Covers)
	return f
}

// Owners shards the cache of objs' kinds as owners. A kind unknown to the
// scheme (an unstructured object without its kind) panics.
func (f *CacheFilter) Owners(objs ...client.Object) *CacheFilter { return f.register(true, objs) }

// Children shards the cache of objs' kinds as children, which follow their
// controller.
func (f *CacheFilter) Children(objs ...client.Object) *CacheFilter {
	return f.register(false, objs)
}

func (f *CacheFilter) register(owners bool, objs []client.Object) *CacheFilter {
	for _, obj := range objs {
		gvk, err := apiutil.GVKForObject(obj, f.scheme)
		if err != nil {
			panic(fmt.Sprintf("shardcr: CacheFilter: the kind of %T: %v", obj, err))
		}
		f.roles[gvk.GroupKind()] = owners
	}
	return f
}

// NewInformer is cache.Options.NewInformer.
func (f *CacheFilter) NewInformer(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	gvk, err := apiutil.GVKForObject(obj, f.scheme)
	if err != nil {
		return f.next(lw, obj, resync, indexers)
	}
	owners, ok := f.roles[gvk.GroupKind()]
	if !ok {
		return f.next(lw, obj, resync, indexers)
	}
	w := f.wrap(lw, owners)
	informer := f.next(w, obj, resync, indexers)
	w.informer = informer
	f.mu.Lock()
	f.tracked = append(f.tracked, w)
	f.mu.Unlock()
	return informer
}

// Covers reports whether the cache shows the objects of hash h in full:
// every informer the filter narrowed has listed a share that holds h, and
// its store has taken that list in. Right after h arrives in the share it
// does not: each informer lists again on its own, so the owners of a new
// share can reach the cache before their children do, and a controller
// syncing an owner then would see it without children and create them
// again. The Reconciler of the filter's sharding waits for Covers before
// it works on an owner (NewCacheFilter registers it). A filter whose
// NewInformer was never called covers every hash, and a stopped informer
// (removed from the cache) holds nothing back.
func (f *CacheFilter) Covers(h uint64) bool {
	f.mu.Lock()
	tracked := slices.Clone(f.tracked)
	f.mu.Unlock()
	for _, w := range tracked {
		if !w.covers(h) {
			return false
		}
	}
	return true
}

// wrap returns the sharded ListerWatcher over lw for owners or children.
func (f *CacheFilter) wrap(lw toolscache.ListerWatcher, owners bool) *shardedListWatch {
	s := f.sharding
	w := &shardedListWatch{inner: toolscache.ToListerWatcherWithContext(lw), orig: lw, share: s.share}
	switch {
	case owners:
		w.serverKey = s.key
		w.keep = func(obj metav1.Object, rs shard.Ranges) bool {
			h, err := s.OwnerHash(obj)
			return err == nil && rs.Contains(h)
		}
	case s.key == shard.KeyNamespace:
		w.serverKey = shard.KeyNamespace
		w.keep = func(obj metav1.Object, rs shard.Ranges) bool { return rs.Contains(shard.Hash(obj.GetNamespace())) }
	default:
		w.keep = func(obj metav1.Object, rs shard.Ranges) bool {
			h, ok := s.ChildHash(obj)
			return !ok || rs.Contains(h)
		}
	}
	return w
}

// shardedListWatch is one informer's ListerWatcher narrowed to the share.
// Its reflector calls it from one goroutine at a time, but a watch's
// events are filtered on the watch's own goroutine: hence the lock.
type shardedListWatch struct {
	inner     toolscache.ListerWatcherWithContext
	orig      toolscache.ListerWatcher
	share     Share
	serverKey shard.Key // "" when the server cannot filter
	keep      func(metav1.Object, shard.Ranges) bool

	informer toolscache.SharedIndexInformer // set before it runs; nil in a bare wrapper

	mu     sync.Mutex
	ranges shard.Ranges        // the share of the last list; watches continue it
	kept   map[string]struct{} // keys passed to the store since that list
	gen    uint64              // counts lists; a watch of an older one passes nothing
	listed bool                // the last list returned (or its stream ended)
	listRV string              // its resourceVersion
	taken  bool                // the store took that list in (covers)
}

var _ toolscache.ListerWatcherWithContext = (*shardedListWatch)(nil)

// ListWithContext lists the share (toolscache.ListerWatcherWithContext).
func (w *shardedListWatch) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return w.list(ctx, opts)
}

// WatchWithContext watches the share (toolscache.ListerWatcherWithContext).
func (w *shardedListWatch) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return w.watch(ctx, opts)
}

// List is ListWithContext without a context, for toolscache.ListerWatcher.
func (w *shardedListWatch) List(opts metav1.ListOptions) (runtime.Object, error) {
	return w.list(context.Background(), opts)
}

// Watch is WatchWithContext without a context, for toolscache.ListerWatcher.
func (w *shardedListWatch) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return w.watch(context.Background(), opts)
}

// IsWatchListSemanticsUnSupported passes on what the wrapped ListerWatcher
// says, so a reflector streams lists exactly when it would have without
// the filter.
func (w *shardedListWatch) IsWatchListSemanticsUnSupported() bool {
	// A reflector asks through this method by name; client-go's helper
	// that asks it is newer than this module's floor, so the interface is
	// spelled here.
	lw, ok := w.orig.(interface{ IsWatchListSemanticsUnSupported() bool })
	return ok && lw.IsWatchListSemanticsUnSupported()
}

// shareLocked is the share a new list selects: the held ranges, or, while
// they are empty (a Lease not renewed in time, or the member leaving), the
// share of the last list. The fence stops the work of an empty share
// anyway; keeping the cache spares a relist of everything when a lapse
// ends with the same share, as it usually does.
func (w *shardedListWatch) shareLocked() shard.Ranges {
	if held := w.share.Held(); !held.Empty() {
		return held
	}
	return w.ranges
}

// newListLocked starts a list of the current share. A list of a share
// other than the last list's is a consistent read (shard.SetConsistentRead):
// the reflector lists again not older than the last resourceVersion it saw,
// which a watch cache may answer without the last writes of the hashes that
// just arrived.
func (w *shardedListWatch) newListLocked(opts *metav1.ListOptions) {
	rs := w.shareLocked()
	if !rs.Empty() && !rs.Equal(w.ranges) {
		shard.SetConsistentRead(opts)
	}
	w.ranges = rs
	w.kept = map[string]struct{}{}
	w.gen++
	w.listed, w.listRV, w.taken = false, "", false
}

// moved reports whether the share is no longer rs: it holds other ranges,
// not none.
func (w *shardedListWatch) moved(rs shard.Ranges) bool {
	held := w.share.Held()
	return !held.Empty() && !held.Equal(rs)
}

// selectorFor sets the shard selector of rs on opts, when the server can
// filter and rs is not empty: an empty selector means everything to the
// server, so a replica holding nothing lists everything and keeps nothing.
func (w *shardedListWatch) selectorFor(opts *metav1.ListOptions, rs shard.Ranges) {
	shard.SetListSelector(opts, "")
	if w.serverKey == "" || rs.Empty() {
		return
	}
	if sel, err := rs.Selector(w.serverKey); err == nil {
		shard.SetListSelector(opts, sel)
	}
}

func (w *shardedListWatch) list(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	w.mu.Lock()
	if opts.Continue == "" {
		// A new list: it fixes the share until the next one. Later pages
		// of a paginated list keep the first page's.
		w.newListLocked(&opts)
	}
	rs, gen := w.ranges, w.gen
	w.mu.Unlock()

	w.selectorFor(&opts, rs)
	list, err := w.inner.ListWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("shardcr: reading a list: %w", err)
	}
	filter := w.serverKey == "" || !shard.ServerFiltered(list, w.serverKey, rs)
	kept := items[:0]
	w.mu.Lock()
	defer w.mu.Unlock()
	if gen != w.gen {
		return nil, fmt.Errorf("shardcr: a list overlapped another")
	}
	for _, item := range items {
		obj, err := meta.Accessor(item)
		if err != nil || (filter && !w.keep(obj, rs)) {
			continue
		}
		w.kept[objectKey(obj)] = struct{}{}
		kept = append(kept, item)
	}
	if err := meta.SetList(list, kept); err != nil {
		return nil, fmt.Errorf("shardcr: filtering a list: %w", err)
	}
	// The store takes a paginated list in after its last page.
	if lm, err := meta.ListAccessor(list); err != nil {
		w.listed = true
	} else if lm.GetContinue() == "" {
		w.listed, w.listRV = true, lm.GetResourceVersion()
	}
	return list, nil
}

func (w *shardedListWatch) watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	// Subscribe before comparing shares, so no change slips in between.
	changed, unsubscribe := w.share.Subscribe()
	w.mu.Lock()
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		// A streaming list: the watch is the list, which ends at the
		// bookmark that carries its resourceVersion.
		w.newListLocked(&opts)
	}
	rs, gen := w.ranges, w.gen
	w.mu.Unlock()
	if w.moved(rs) {
		unsubscribe()
		return expiredWatch(), nil
	}
	w.selectorFor(&opts, rs)
	inner, err := w.inner.WatchWithContext(ctx, opts)
	if err != nil {
		unsubscribe()
		return nil, err
	}
	sw := &shardWatch{inner: inner, out: make(chan watch.Event), stop: make(chan struct{}), lw: w, ranges: rs, gen: gen}
	go sw.run(changed, unsubscribe)
	return sw, nil
}

// admit decides what becomes of a watch event under rs: passed, turned
// into a deletion, or dropped.
func (w *shardedListWatch) admit(ev watch.Event, rs shard.Ranges, gen uint64) (watch.Event, bool) {
	switch ev.Type {
	case watch.Added, watch.Modified, watch.Deleted:
	case watch.Bookmark:
		w.bookmark(ev, gen)
		return ev, true
	default:
		return ev, true // errors
	}
	obj, err := meta.Accessor(ev.Object)
	if err != nil {
		return ev, true
	}
	key := objectKey(obj)
	w.mu.Lock()
	defer w.mu.Unlock()
	if gen != w.gen {
		return ev, false // a watch the reflector already left for a new list
	}
	_, had := w.kept[key]
	if ev.Type != watch.Deleted && w.keep(obj, rs) {
		w.kept[key] = struct{}{}
		return ev, true
	}
	if !had {
		return ev, false
	}
	delete(w.kept, key)
	ev.Type = watch.Deleted
	return ev, true
}

// bookmark notes the end of a streaming list of generation gen: its
// resourceVersion is the list's.
func (w *shardedListWatch) bookmark(ev watch.Event, gen uint64) {
	obj, err := meta.Accessor(ev.Object)
	if err != nil || obj.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if gen == w.gen && !w.listed {
		w.listed, w.listRV = true, obj.GetResourceVersion()
	}
}

// covers reports whether the store shows hash h in full (CacheFilter.Covers):
// the last list's share holds h and the store took that list in. The store
// has when its resourceVersion passed the list's (a later watch event was
// applied after it), or, at the list's resourceVersion exactly or when
// either has none (the store reports none with client-go's AtomicFIFO
// off), when it holds every key passed since the list: a store still
// waiting for the list lacks the keys of the share's new ranges. A key the
// watch passed and the store did not apply yet only delays the answer.
// Once taken in, a list stays so until the next one.
func (w *shardedListWatch) covers(h uint64) bool {
	if w.informer != nil && w.informer.IsStopped() {
		// Removed from the cache (or the cache stopped): it serves no
		// reads, so it holds no reconcile back.
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.ranges.Contains(h) || !w.listed {
		return false
	}
	if w.taken || w.informer == nil {
		return true
	}
	w.taken = w.storeTookListLocked()
	return w.taken
}

func (w *shardedListWatch) storeTookListLocked() bool {
	store := w.informer.GetStore()
	// Resource versions compare as the API server defines it; a store that
	// reports none (client-go before v0.36) or one that is not comparable
	// falls back to the keys.
	if versioned, ok := store.(consistency.SyncedResourceVersioner); ok {
		if c, err := consistency.CompareResourceVersions(versioned.LastStoreSyncResourceVersion(), w.listRV); err == nil && c != 0 {
			return c > 0
		}
	}
	for key := range w.kept {
		if _, exists, err := store.GetByKey(key); err != nil || !exists {
			return false
		}
	}
	return true
}

// shardWatch filters one watch and ends it when the share changes.
type shardWatch struct {
	inner  watch.Interface
	out    chan watch.Event
	stop   chan struct{}
	once   sync.Once
	lw     *shardedListWatch
	ranges shard.Ranges
	gen    uint64
}

func (s *shardWatch) Stop()                          { s.once.Do(func() { close(s.stop) }) }
func (s *shardWatch) ResultChan() <-chan watch.Event { return s.out }

func (s *shardWatch) run(changed <-chan struct{}, unsubscribe func()) {
	defer close(s.out)
	defer s.inner.Stop()
	defer unsubscribe()
	for {
		select {
		case <-s.stop:
			return
		case <-changed:
			if s.lw.moved(s.ranges) {
				s.send(expiredEvent())
				return
			}
		case ev, ok := <-s.inner.ResultChan():
			if !ok {
				return
			}
			if ev, pass := s.lw.admit(ev, s.ranges, s.gen); pass && !s.send(ev) {
				return
			}
		}
	}
}

// send delivers ev unless the watch is stopped first.
func (s *shardWatch) send(ev watch.Event) bool {
	select {
	case s.out <- ev:
		return true
	case <-s.stop:
		return false
	}
}

// expiredEvent is a 410 Expired error: the reflector answers it by listing
// again, quietly, as after a compaction.
func expiredEvent() watch.Event {
	status := metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    410,
		Reason:  metav1.StatusReasonExpired,
		Message: "shardcr: the share changed; list again",
	}
	return watch.Event{Type: watch.Error, Object: &status}
}

// expiredWatch is a watch whose only event is expiredEvent.
func expiredWatch() watch.Interface {
	w := watch.NewFakeWithChanSize(1, false)
	w.Action(watch.Error, expiredEvent().Object)
	return w
}

func objectKey(obj metav1.Object) string { return toolscache.MetaObjectToName(obj).String() }
