package shard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Runner runs a controller as one member of a ring: it keeps the Member in
// the ring, and for each share the member holds it runs one epoch, the
// informers and controller a build function makes over that share.
//
// When the share changes, the epoch's context is cancelled at once and a new
// epoch starts over the new share, once the writes the last one left in
// flight have settled (see syncLog). That relists the share and forgets the
// controller's queue and expectations, the cost of a hand-over paid by each
// replica whose share changed; in exchange the new controller starts only
// once its caches are synced from a list made after every earlier write
// landed, so it never counts an owner's children from a cache that has not
// seen them. A lost range needs no restart to be safe: the member
// cancels the Guards over it at once, and Epoch.Fence turns its owners away.
type Runner struct {
	member  *Member
	build   func(context.Context, *Epoch) (*Work, error)
	running atomic.Bool
	current atomic.Pointer[Epoch]

	epochs, handovers, fenced atomic.Uint64
}

// Work is the controller of one epoch, as the build function made it over
// the epoch's share. The Runner runs its informers and Run, and stops them
// when the epoch ends.
type Work struct {
	// Informers run for the epoch, over Epoch.ListWatch.
	Informers []cache.SharedIndexInformer
	// Owners is the informer, one of Informers, of the objects the
	// controller syncs by "namespace/name" key, and OwnerHash their hash
	// as the share was cut (ByKey(k).Hash): Fence, the gained owners and
	// the sweep read them there.
	Owners    cache.SharedIndexInformer
	OwnerHash func(metav1.Object) (uint64, error)
	// Run runs the controller until its context is done or Drain has
	// drained it. Drain, when set, makes Run finish the queued work and
	// return; nil stops it at once instead.
	Run   func(ctx context.Context)
	Drain func()
	// HasSynced says whether the controller's caches are synced; nil
	// means every informer's are.
	HasSynced func() bool
	// Queue queues an owner key for a sync. QueueFirst queues it ahead of
	// the others, for the owners of gained ranges (nil: Queue).
	Queue, QueueFirst func(key string)
	// Behind, when set, reports an owner whose status lags its spec: every
	// SweepInterval the Runner queues every such owner of the share, which
	// bounds what a lost event can cost to one interval.
	Behind        func(obj any) bool
	SweepInterval time.Duration
}

// Epoch is one share's run, given to the build function.
type Epoch struct {
	// Held is the share; Gained is the part of it the last epoch did not
	// hold, whose owners waited since their holder stopped.
	Held, Gained Ranges

	r       *Runner
	takeUps uint64  // the member's TakeUps before Held was read
	syncs   syncLog // this epoch's fenced syncs
	work    *Work

	mu  sync.Mutex
	lws []*ShareListWatch
}

// NewRunner returns a Runner for m that makes each epoch's Work with build;
// its context is cancelled when the epoch ends. Run starts it, and runs m:
// don't run m elsewhere.
func NewRunner(m *Member, build func(ctx context.Context, e *Epoch) (*Work, error)) *Runner {
	if m == nil || build == nil {
		panic("shard: NewRunner: nil member or build function")
	}
	return &Runner{member: m, build: build}
}

// Member is the ring member the Runner runs.
func (r *Runner) Member() *Member { return r.member }

// epochEnd says why an epoch ended.
type epochEnd int

const (
	shareChanged epochEnd = iota
	drained
	stoppedNow
)

// Run keeps the member in the ring and runs an epoch per share until drain
// is closed (the epoch's Work drains) or ctx is done (it stops at once). The
// member leaves the ring, deleting its Lease so the others take over at once,
// only after the last epoch's work has stopped; a failure to leave is logged,
// since the Lease then just expires. Run returns the error of a build
// function or of its Work's informers, and is called once.
func (r *Runner) Run(ctx context.Context, drain <-chan struct{}) error {
	if ctx == nil {
		panic("shard: Runner.Run: nil context")
	}
	if !r.running.CompareAndSwap(false, true) {
		panic("shard: Runner.Run: called twice")
	}
	changed := make(chan struct{}, 1)
	defer r.member.subscribe(func() {
		r.handovers.Add(1)
		select {
		case changed <- struct{}{}:
		default: // one wake-up is enough: the epoch reads the share afresh
		}
	})()
	memberCtx, leave := context.WithCancel(context.WithoutCancel(ctx))
	memberDone := make(chan error, 1)
	go func() { memberDone <- r.member.Run(memberCtx) }()
	defer func() {
		leave()
		if err := <-memberDone; err != nil {
			klog.FromContext(ctx).Error(err, "Leaving the ring")
		}
	}()
	var worked Ranges     // the share of the last epoch
	var settled time.Time // when the writes of the epochs so far have settled (see syncLog)
	for {
		held := r.member.Held()
		if held.Empty() {
			select {
			case <-changed:
				continue
			case <-drain:
				return nil
			case <-ctx.Done():
				return nil
			}
		}
		if wait := settled.Sub(r.member.cfg.clock.Now()); wait > 0 {
			timer := r.member.cfg.clock.NewTimer(wait)
			select {
			case <-timer.C():
			case <-changed:
				timer.Stop()
				continue
			case <-drain:
				timer.Stop()
				return nil
			case <-ctx.Done():
				timer.Stop()
				return nil
			}
		}
		end, settledAt, err := r.runEpoch(ctx, drain, changed, held, held.Subtract(worked))
		if err != nil || end != shareChanged {
			return err
		}
		worked = held
		settled = later(settled, settledAt)
	}
}

// runEpoch runs one Work over held until the member's share differs from
// held, drain is closed or ctx is done. When the share changed, it returns
// when the epoch's writes will have settled, which the next epoch waits for
// before it lists (see syncLog).
func (r *Runner) runEpoch(ctx context.Context, drain, changed <-chan struct{}, held, gained Ranges) (end epochEnd, settled time.Time, err error) {
	// Read before the informers list, so that a take-up after this
	// restarts the epoch and one before it is in the list.
	e := &Epoch{Held: held, Gained: gained, r: r, takeUps: r.member.TakeUps()}
	epochCtx, stop := context.WithCancel(ctx)
	var informers sync.WaitGroup
	defer func() {
		stop()
		informers.Wait()
	}()
	w, err := r.build(epochCtx, e)
	if err == nil && (w == nil || w.Run == nil || w.Owners == nil || w.OwnerHash == nil || w.Queue == nil) {
		err = errors.New("the Work lacks Run, Owners, OwnerHash or Queue")
	}
	if err == nil {
		e.work = w
		err = e.queueGained()
	}
	if err != nil {
		return stoppedNow, time.Time{}, fmt.Errorf("shard: starting the work over this replica's share: %w", err)
	}
	r.epochs.Add(1)
	klog.FromContext(ctx).Info("Starting work on this replica's share", "ring", r.member.store.ring, "identity", r.member.Identity(),
		"fraction", held.Fraction(), "ranges", len(held), "members", r.member.Members())
	for _, inf := range w.Informers {
		informers.Go(func() { inf.RunWithContext(epochCtx) })
	}
	if w.Behind != nil && w.SweepInterval > 0 {
		informers.Go(func() { e.sweep(epochCtx) })
	}
	r.current.Store(e)
	defer r.current.Store(nil)
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		w.Run(epochCtx)
	}()
	for {
		select {
		case <-changed:
			// The same share with no take-up since the epoch began needs
			// nothing. The same share taken up again (a lapse, announced
			// as a loss and a return) needs a fresh list like any gain:
			// another member may have worked on it meanwhile.
			if r.member.TakeUps() == e.takeUps && r.member.Held().Equal(held) {
				continue
			}
			stop()
			<-runDone
			return shareChanged, e.syncs.settledAt(r.member.cfg.clock.Now(), r.member.cfg.safetyMargin), nil
		case <-drain:
			if w.Drain != nil {
				w.Drain()
			} else {
				stop()
			}
			<-runDone
			return drained, time.Time{}, nil
		case <-ctx.Done():
			<-runDone
			return stoppedNow, time.Time{}, nil
		case <-runDone:
			return stoppedNow, time.Time{}, nil
		}
	}
}

// ListWatch is NewShareListWatch over the epoch's share; the Runner reads
// its ServerFiltered for Stats.
func (e *Epoch) ListWatch(inner cache.ListerWatcher, by Sharding) (*ShareListWatch, error) {
	lw, err := NewShareListWatch(inner, e.Held, by)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.lws = append(e.lws, lw)
	e.mu.Unlock()
	return lw, nil
}

// Informer is an informer of obj's kind over ListWatch(inner, by), indexed
// by namespace, as a set controller's informers are; list it in
// Work.Informers.
func (e *Epoch) Informer(inner cache.ListerWatcher, obj runtime.Object, by Sharding) (cache.SharedIndexInformer, error) {
	lw, err := e.ListWatch(inner, by)
	if err != nil {
		return nil, err
	}
	return cache.NewSharedIndexInformer(lw, obj, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}), nil
}

// Fence fences one sync of the owner with key, the shape of a podset
// SyncGuard: it returns the context to sync under and the function to call
// when the sync is over, or ok false and how long to wait before trying
// again (zero: don't).
//
// An owner the epoch's cache does not hold is skipped: it is outside the
// share, or gone, and a sync could only forget it. An owner the member may
// not work on now but still wants (its Lease is being renewed, or the range
// taken up again) is tried again a renew interval later, by when the member
// holds it or has given it up, so a refusal never loses the owner. One
// another member wants is skipped: that member syncs it when it takes the
// range up, since a new epoch syncs every owner of its share.
//
// The hash is read from the cache and the sync reads the owner again: an
// owner deleted and re-created under the same name in between, with a UID
// in a range given up at that very moment, would be synced under the old
// UID's guard. The cache holds only owners of the share, which keeps that
// to a hand-over racing a re-creation.
func (e *Epoch) Fence(ctx context.Context, key string) (guarded context.Context, done func(), retryAfter time.Duration, ok bool) {
	h, found := e.ownerHash(key)
	if !found {
		return ctx, nil, 0, false
	}
	m := e.r.member
	guarded, release, ok := m.Guard(ctx, h)
	if ok {
		e.syncs.begin()
		return guarded, func() { release(); e.syncs.end(m.cfg.clock.Now()) }, 0, true
	}
	e.r.fenced.Add(1)
	if m.Wants(h) {
		return guarded, nil, m.cfg.renewInterval, false
	}
	return guarded, nil, 0, false
}

// ownerHash hashes the owner the epoch's cache holds under key.
func (e *Epoch) ownerHash(key string) (uint64, bool) {
	if e.work == nil {
		return 0, false
	}
	obj, ok, err := e.work.Owners.GetIndexer().GetByKey(key)
	if err != nil || !ok {
		return 0, false
	}
	return e.hash(obj)
}

func (e *Epoch) hash(obj any) (uint64, bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return 0, false
	}
	h, err := e.work.OwnerHash(m)
	return h, err == nil
}

// queueGained queues each owner the owner informer delivers in Gained with
// QueueFirst, ahead of the owners the replica held before: those were synced
// until a moment ago, the gained ones wait since their holder stopped.
func (e *Epoch) queueGained() error {
	if e.Gained.Empty() {
		return nil
	}
	first := e.work.QueueFirst
	if first == nil {
		first = e.work.Queue
	}
	_, err := e.work.Owners.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if h, ok := e.hash(obj); ok && e.Gained.Contains(h) {
				if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
					first(key)
				}
			}
		},
	})
	return err
}

// sweep queues, every SweepInterval until ctx is done, the owners of the
// share that are Behind. Events, a new epoch's list and Fence's retries wake
// every owner that needs work; the sweep bounds what a wake-up lost all the
// same can cost, for a pass over the cache in memory.
func (e *Epoch) sweep(ctx context.Context) {
	t := e.r.member.cfg.clock.NewTicker(e.work.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		for _, obj := range e.work.Owners.GetStore().List() {
			if !e.work.Behind(obj) {
				continue
			}
			if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
				e.work.Queue(key)
			}
		}
	}
}

// Ready is nil when the member holds nothing (a ready standby) or the
// current epoch's caches are synced.
func (r *Runner) Ready() error {
	e := r.current.Load()
	if e == nil {
		return nil
	}
	synced := e.work.HasSynced
	if synced == nil {
		synced = func() bool {
			for _, inf := range e.work.Informers {
				if !inf.HasSynced() {
					return false
				}
			}
			return true
		}
	}
	if !synced() {
		return errors.New("informer caches of this replica's share not synced")
	}
	return nil
}

// RunnerStats is what a Runner has done and holds, for metrics.
type RunnerStats struct {
	// Epochs counts the epochs started, Handovers the changes of the
	// member's share, FencedSyncs the syncs Fence turned away because the
	// member did not hold the owner's hash.
	Epochs, Handovers, FencedSyncs uint64
	// Cached counts the objects in each of the current epoch's
	// Work.Informers, in order; nil between epochs.
	Cached []int
	// ServerFiltered is true when the API server filtered the last list of
	// every ListWatch of the epoch it can filter; known is false before the
	// first such list.
	ServerFiltered, ServerFilterKnown bool
}

// Stats reads the Runner's counters and the current epoch's caches.
func (r *Runner) Stats() RunnerStats {
	s := RunnerStats{Epochs: r.epochs.Load(), Handovers: r.handovers.Load(), FencedSyncs: r.fenced.Load()}
	e := r.current.Load()
	if e == nil {
		return s
	}
	for _, inf := range e.work.Informers {
		s.Cached = append(s.Cached, len(inf.GetStore().ListKeys()))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s.ServerFiltered = true
	for _, lw := range e.lws {
		if filtered, known := lw.ServerFiltered(); known {
			s.ServerFilterKnown = true
			s.ServerFiltered = s.ServerFiltered && filtered
		}
	}
	s.ServerFiltered = s.ServerFiltered && s.ServerFilterKnown
	return s
}
