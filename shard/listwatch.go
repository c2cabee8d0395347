package shard

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// Sharding says how an informer's objects map to hashes: which field, if
// any, the API server can filter on, and the hash the client filters on.
type Sharding struct {
	// Server is the key sent as the shardSelector; "" sends none, for a hash
	// the server cannot compute (HashController).
	Server Key
	// Hash is the hash the client filters each object on. It must agree with
	// Server when Server is set.
	Hash func(metav1.Object) (uint64, error)
	// Moves is true when an object's hash can change while it lives (a
	// child adopted or released changes its controller): an update that
	// takes an object out of the share is then passed on as a deletion.
	Moves bool
}

// ByKey shards objects by their own uid or namespace, which the API server
// can filter on and which never change.
func ByKey(k Key) Sharding {
	return Sharding{Server: k, Hash: func(o metav1.Object) (uint64, error) { return HashObject(o, k) }}
}

// ByController shards children by their controller's UID (HashController),
// so they land with their owner when owners are sharded ByKey(KeyUID). The
// server cannot filter on it: the client does.
func ByController() Sharding {
	return Sharding{Hash: HashController, Moves: true}
}

// Server filtering as the last list answer showed it.
const (
	filterUnknown int32 = iota
	filterServer
	filterClient
)

// ShareListWatch lists and watches only the objects of one share: it sends
// the share as ListOptions.ShardSelector (when the Sharding has a server
// key and the libraries have the field, see ServerSelection) and filters every listed object and watch event on the client before
// the informer's store sees it, so a replica's memory holds its share only,
// whether or not the server filtered (the ShardedListAndWatch gate, alpha in
// Kubernetes 1.36, off by default). The client filter stays on when the
// server filters: it costs one hash per object and keeps the store exact
// even across a server that answered for another set.
//
// The share is fixed: when a member's share changes, build a new
// ShareListWatch and a new informer over it (see the package doc for why a
// restart is the simple correct answer).
//
// It opts out of the streaming watch-list (WatchListClient): ShardInfo, the
// server's proof that it filtered, comes only on list answers, and an
// initial list is what a fresh share needs anyway.
type ShareListWatch struct {
	inner    cache.ListerWatcherWithContext
	ranges   Ranges
	by       Sharding
	selector string
	filter   atomic.Int32
}

var (
	_ cache.ListerWatcher            = (*ShareListWatch)(nil)
	_ cache.ListerWatcherWithContext = (*ShareListWatch)(nil)
)

// NewShareListWatch wraps inner to list and watch the share ranges by by.
// An empty share is ErrNoRanges: the API server reads an empty selector as
// everything, so a replica holding nothing must not start informers at all.
// A Sharding without a Hash, or with an invalid server key, is an error.
func NewShareListWatch(inner cache.ListerWatcher, ranges Ranges, by Sharding) (*ShareListWatch, error) {
	if inner == nil {
		panic("shard: NewShareListWatch: nil ListerWatcher")
	}
	if by.Hash == nil {
		return nil, fmt.Errorf("shard: NewShareListWatch: sharding without a hash")
	}
	if ranges.Empty() {
		return nil, ErrNoRanges
	}
	lw := &ShareListWatch{inner: cache.ToListerWatcherWithContext(inner), ranges: ranges, by: by}
	if by.Server != "" {
		sel, err := ranges.Selector(by.Server)
		if err != nil {
			return nil, err
		}
		lw.selector = sel
	}
	return lw, nil
}

// Ranges is the share this ListWatch selects.
func (lw *ShareListWatch) Ranges() Ranges { return lw.ranges }

// ServerFiltered reports whether the last list answer was filtered by the
// API server (its ShardInfo echoed this share); known is false before the
// first list, and always for a Sharding the server cannot filter.
func (lw *ShareListWatch) ServerFiltered() (filtered, known bool) {
	switch lw.filter.Load() {
	case filterServer:
		return true, true
	case filterClient:
		return false, true
	}
	return false, false
}

// IsWatchListSemanticsUnSupported tells client-go's reflector to list and
// then watch rather than stream the initial list: see the type's doc.
func (lw *ShareListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// keeps reports whether obj is in the share; an object that cannot be
// hashed is not.
func (lw *ShareListWatch) keeps(obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	h, err := lw.by.Hash(m)
	return err == nil && lw.ranges.Contains(h)
}

// ListWithContext lists with the shard selector and drops the items outside
// the share. Its first list, the one an informer sends at resourceVersion
// 0, is a consistent read (see SetConsistentRead): a ShareListWatch is built
// when a share arrives.
func (lw *ShareListWatch) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	if lw.selector != "" {
		SetListSelector(&opts, lw.selector)
	}
	if opts.ResourceVersion == "0" {
		SetConsistentRead(&opts)
	}
	list, err := lw.inner.ListWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	if lw.selector != "" {
		state := filterClient
		if ServerFiltered(list, lw.by.Server, lw.ranges) {
			state = filterServer
		}
		lw.filter.Store(state)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("shard: filtering a list: %w", err)
	}
	kept := items[:0]
	for _, item := range items {
		if lw.keeps(item) {
			kept = append(kept, item)
		}
	}
	if len(kept) == len(items) {
		return list, nil
	}
	if err := meta.SetList(list, kept); err != nil {
		return nil, fmt.Errorf("shard: filtering a list: %w", err)
	}
	return list, nil
}

// WatchWithContext watches with the shard selector and passes on only the
// events of objects in the share (and bookmarks and errors). With a Sharding
// whose hashes move, an update that takes an object out of the share becomes
// a deletion, so the store forgets it.
func (lw *ShareListWatch) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	if lw.selector != "" {
		SetListSelector(&opts, lw.selector)
	}
	w, err := lw.inner.WatchWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	fw := &filteredWatch{inner: w, out: make(chan watch.Event), stop: make(chan struct{})}
	go fw.run(lw.event)
	return fw, nil
}

// event decides what the store sees of one watch event.
func (lw *ShareListWatch) event(ev watch.Event) (watch.Event, bool) {
	switch ev.Type {
	case watch.Added, watch.Deleted:
		return ev, lw.keeps(ev.Object)
	case watch.Modified:
		if lw.keeps(ev.Object) {
			return ev, true
		}
		if lw.by.Moves {
			// It may have been in the share before this update; a
			// deletion of an object the store never had is ignored.
			return watch.Event{Type: watch.Deleted, Object: ev.Object}, true
		}
		return ev, false
	}
	return ev, true // bookmarks and errors
}

// List is ListWithContext without a context, for the ListerWatcher interface.
func (lw *ShareListWatch) List(opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

// Watch is WatchWithContext without a context, for the ListerWatcher interface.
func (lw *ShareListWatch) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}

// filteredWatch relays the events of inner that pass a filter. Its goroutine
// ends when inner's channel closes or Stop is called.
type filteredWatch struct {
	inner watch.Interface
	out   chan watch.Event
	stop  chan struct{}
	once  sync.Once
}

func (w *filteredWatch) Stop() {
	w.once.Do(func() {
		close(w.stop)
		w.inner.Stop()
	})
}

func (w *filteredWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *filteredWatch) run(filter func(watch.Event) (watch.Event, bool)) {
	defer close(w.out)
	in := w.inner.ResultChan()
	for {
		select {
		case <-w.stop:
			return
		case ev, ok := <-in:
			if !ok {
				return
			}
			ev, keep := filter(ev)
			if !keep {
				continue
			}
			select {
			case w.out <- ev:
			case <-w.stop:
				return
			}
		}
	}
}

// SetConsistentRead makes opts ask for a consistent read: an answer that
// holds every write the API server acknowledged before it, as a quorum
// read from etcd does. An informer's list of a share that just arrived
// needs one. Informers list at resourceVersion 0 first, and after a watch
// ends not older than the last resourceVersion they saw, and the API
// server may answer either from a watch cache that has not caught up with
// the last writes of the share's previous holder: its owners would then be
// synced without the children those writes created, and created again. A
// streaming list (SendInitialEvents) keeps the NotOlderThan match it
// requires; with no resourceVersion it waits for the watch cache to catch
// up with etcd.
func SetConsistentRead(opts *metav1.ListOptions) {
	opts.ResourceVersion = ""
	if opts.SendInitialEvents == nil {
		opts.ResourceVersionMatch = ""
	}
}
