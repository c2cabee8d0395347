package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/podset"
	"github.com/ctrlkit/ctrlkit/shard"
	"github.com/ctrlkit/ctrlkit/workqueue"
	"github.com/ctrlkit/ctrlkit/workqueue/prommetrics"
)

// Values of --shard-by.
const (
	shardByUID       = "uid"
	shardByNamespace = "namespace"
)

// shardConfig is the --shard-* flag group.
type shardConfig struct {
	ring, by, namespace, identity              string
	leaseDuration, renewInterval, safetyMargin time.Duration
	sweepInterval                              time.Duration
}

// defaultSweepInterval is --shard-sweep-interval's default: a missed event
// costs an owner at most this long, and a pass over a share's owners in
// memory every half minute costs nothing worth measuring.
const defaultSweepInterval = 30 * time.Second

func (s shardConfig) enabled() bool { return s.ring != "" }

// defaultShardIdentity is the pod's name when the Deployment passes it
// through the downward API, else the host name (a pod's name too).
func defaultShardIdentity() string {
	if name := os.Getenv("POD_NAME"); name != "" {
		return name
	}
	name, _ := os.Hostname()
	return name
}

// writeTimeout is the deadline of each Lease write: at most shard's
// default, and short enough that a renewal that times out still leaves the
// member trusted until the next one.
func (s shardConfig) writeTimeout() time.Duration {
	return min(shard.DefaultWriteTimeout, (s.leaseDuration-s.safetyMargin-s.renewInterval)/2)
}

func (s shardConfig) validate() error {
	var errs []error
	if s.by != shardByUID && s.by != shardByNamespace {
		errs = append(errs, fmt.Errorf("--shard-by must be %s or %s, not %q", shardByUID, shardByNamespace, s.by))
	}
	if s.identity == "" || s.namespace == "" {
		errs = append(errs, errors.New("--shard-ring needs --shard-identity and --shard-lease-namespace"))
	}
	if s.leaseDuration < time.Second || s.leaseDuration%time.Second != 0 {
		errs = append(errs, fmt.Errorf("--shard-lease-duration must be a positive whole number of seconds, not %v", s.leaseDuration))
	}
	if s.sweepInterval <= 0 {
		errs = append(errs, fmt.Errorf("--shard-sweep-interval must be positive, not %v", s.sweepInterval))
	}
	if s.renewInterval <= 0 || s.safetyMargin < 0 || s.leaseDuration-s.safetyMargin-s.renewInterval <= 0 {
		errs = append(errs, fmt.Errorf("--shard-renew-interval (%v) plus --shard-safety-margin (%v) must be shorter than --shard-lease-duration (%v): a healthy replica would lose its share between renewals",
			s.renewInterval, s.safetyMargin, s.leaseDuration))
	}
	return errors.Join(errs...)
}

// key is what the owners are hashed by.
func (s shardConfig) key() shard.Key {
	if s.by == shardByNamespace {
		return shard.KeyNamespace
	}
	return shard.KeyUID
}

// podSharding is how pods follow their owner: by namespace with namespace
// sharding, which the API server can filter; by their controller's UID with
// UID sharding, which only the client can.
func (s shardConfig) podSharding() shard.Sharding {
	if s.by == shardByNamespace {
		return shard.ByKey(shard.KeyNamespace)
	}
	return shard.ByController()
}

// ringRunner runs the controller as one member of a ring: it keeps the
// member's Lease, and for each share the member holds it runs one epoch:
// informers over the share (shard.ShareListWatch) and a controller whose
// every sync is fenced by the member's Guard over the owner's hash.
//
// When the share changes, the epoch stops at once and a new one starts over
// the new share. That relists the share's owners and pods and forgets the
// work queue and expectations: the cost of a hand-over, paid by each
// replica whose share changed. It is what makes a gained range safe: the new
// epoch's controller starts only after its caches are synced, so it never
// counts the pods of a newly gained owner from a cache that has not seen
// them. A range that is lost is safe without waiting for the restart: the
// member cancels the Guard contexts over it at once, and syncs of its owners
// are skipped from then on.
type ringRunner struct {
	o       options
	client  kubernetes.Interface // writes
	watches kubernetes.Interface // informers
	opts    []replicaset.Option
	member  *shard.Member
	metrics *ringMetrics
	queue   *prommetrics.Provider // the controller's work-queue metrics, shared by every epoch
	changed chan struct{}         // a share change is waiting; capacity 1
	epoch   atomic.Pointer[epoch]
}

// epoch is the controller and informers of one share.
type epoch struct {
	held         shard.Ranges
	takeUps      uint64   // the member's TakeUps before held was read
	settling     settling // the previous epoch's owners whose writes may still land
	syncs        syncLog  // this epoch's guarded syncs
	ctrl         *replicaset.Controller
	pods, owners cache.SharedIndexInformer
	ownerLW      *shard.ShareListWatch
	podLW        *shard.ShareListWatch
}

func newRingRunner(o options, cs clients, opts []replicaset.Option, metrics *controllerMetrics) (*ringRunner, error) {
	r := &ringRunner{o: o, client: cs.requests, watches: cs.watches, opts: opts, queue: metrics.queue, changed: make(chan struct{}, 1)}
	s := o.shard
	m, err := shard.NewMember(cs.leases.CoordinationV1(), s.namespace, s.ring, s.identity,
		shard.WithLeaseDuration(s.leaseDuration),
		shard.WithRenewInterval(s.renewInterval),
		shard.WithSafetyMargin(s.safetyMargin),
		shard.WithWriteTimeout(s.writeTimeout()),
		shard.WithOnChange(r.onChange),
	)
	if err != nil {
		return nil, fmt.Errorf("joining ring %q: %w", s.ring, err)
	}
	r.member = m
	// After the member: the metrics read it, and its callback (which runs
	// only once Run starts) writes them.
	rm, err := newRingMetrics(metrics.registry, r)
	if err != nil {
		return nil, err
	}
	r.metrics = rm
	return r, nil
}

// onChange runs on the member's goroutine: it records the new share and
// wakes run without blocking.
func (r *ringRunner) onChange(held shard.Ranges) {
	r.metrics.handovers.Inc()
	r.metrics.held.Set(held.Fraction())
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// ready is /readyz: a replica that holds nothing yet is a ready standby; one
// that holds a share is ready once its epoch's caches are synced.
func (r *ringRunner) ready() error {
	e := r.epoch.Load()
	if e == nil || e.ctrl.HasSynced() {
		return nil
	}
	return errors.New("informer caches of this replica's share not synced")
}

// epochEnd says why an epoch ended.
type epochEnd int

const (
	shareChanged epochEnd = iota
	drained
	stoppedNow
)

// run keeps the member in the ring and runs an epoch per share until drain
// is closed (the current epoch drains) or ctx is done (it stops at once).
// The member leaves the ring (and deletes its Lease, so the others take
// over at once) only after the last epoch's work has stopped.
func (r *ringRunner) run(ctx context.Context, drain <-chan struct{}) error {
	logger := klog.FromContext(ctx)
	memberCtx, leave := context.WithCancel(context.WithoutCancel(ctx))
	memberDone := make(chan error, 1)
	go func() { memberDone <- r.member.Run(memberCtx) }()
	defer func() {
		leave()
		if err := <-memberDone; err != nil {
			logger.Error(err, "Leaving the ring")
		}
	}()
	var worked shard.Ranges // the share of the last epoch
	var left settling       // what it left to settle
	for {
		held := r.member.Held()
		if held.Empty() {
			select {
			case <-r.changed:
				continue
			case <-drain:
				return nil
			case <-ctx.Done():
				return nil
			}
		}
		end, err := r.runEpoch(ctx, drain, held, held.Subtract(worked), &left)
		if err != nil {
			return err
		}
		worked = held
		if end != shareChanged {
			return nil
		}
	}
}

// runEpoch runs the controller over held until the member's share differs
// from held, drain is closed or ctx is done.
// Owners in gained, the ranges the last epoch did not have, are synced
// first: they are the ones waiting since their holder stopped, while the
// others were synced until a moment ago. left is what the last epoch left
// to settle on entry, and what this one leaves on return (see guard).
func (r *ringRunner) runEpoch(ctx context.Context, drain <-chan struct{}, held, gained shard.Ranges, left *settling) (epochEnd, error) {
	logger := klog.FromContext(ctx)
	// Read before the informers list, so that a take-up after this
	// restarts the epoch and one before it is in the list.
	takeUps := r.member.TakeUps()
	e, err := r.newEpoch(ctx, held)
	if err != nil {
		return stoppedNow, err
	}
	e.takeUps, e.settling = takeUps, *left
	if err := r.prioritize(e, gained); err != nil {
		return stoppedNow, err
	}
	r.metrics.epochs.Inc()
	r.metrics.held.Set(held.Fraction())
	logger.Info("Starting work on this replica's share", "ring", r.o.shard.ring, "identity", r.member.Identity(),
		"fraction", held.Fraction(), "ranges", len(held), "members", r.member.Members())
	epochCtx, stop := context.WithCancel(ctx)
	var informers sync.WaitGroup
	defer func() {
		stop()
		informers.Wait()
	}()
	for _, inf := range []cache.SharedIndexInformer{e.pods, e.owners} {
		informers.Go(func() { inf.RunWithContext(epochCtx) })
	}
	informers.Go(func() { r.sweep(epochCtx, e) })
	r.epoch.Store(e)
	defer r.epoch.Store(nil)
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		_ = e.ctrl.Run(epochCtx) // nil once stopped; misuse is impossible here
		r.resetQueueGauges()
	}()
	for {
		select {
		case <-r.changed:
			// The same share with no take-up since the epoch began needs
			// nothing. The same share taken up again (a lapse, announced
			// as a loss and a return) needs a fresh list like any gain:
			// another member may have worked on it meanwhile.
			if r.member.TakeUps() == e.takeUps && r.member.Held().Equal(held) {
				continue
			}
			stop()
			<-runDone
			*left = e.syncs.settling(time.Now(), r.o.shard.safetyMargin)
			return shareChanged, nil
		case <-drain:
			e.ctrl.Drain()
			<-runDone
			return drained, nil
		case <-ctx.Done():
			<-runDone
			return stoppedNow, nil
		case <-runDone:
			return stoppedNow, nil
		}
	}
}

// newEpoch builds the informers and the controller of one share.
func (r *ringRunner) newEpoch(ctx context.Context, held shard.Ranges) (*epoch, error) {
	ns := r.o.namespace
	podLW, err := shard.NewShareListWatch(podListWatch(r.watches, ns), held, r.o.shard.podSharding())
	if err != nil {
		return nil, err
	}
	ownerLW, err := shard.NewShareListWatch(ownerListWatch(r.watches, r.o.kind, ns), held, shard.ByKey(r.o.shard.key()))
	if err != nil {
		return nil, err
	}
	byNamespace := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	e := &epoch{
		held:    held,
		podLW:   podLW,
		ownerLW: ownerLW,
		pods:    cache.NewSharedIndexInformer(podLW, &v1.Pod{}, 0, byNamespace),
	}
	opts := append(append([]replicaset.Option(nil), r.opts...), podset.WithSyncGuard(r.guard(e)))
	pods := podInformer{e.pods}
	if r.o.kind == kindReplicationController {
		e.owners = cache.NewSharedIndexInformer(ownerLW, &v1.ReplicationController{}, 0, byNamespace)
		e.ctrl, err = replicaset.NewReplicationManager(ctx, r.client, pods, rcInformer{e.owners}, opts...)
	} else {
		e.owners = cache.NewSharedIndexInformer(ownerLW, &appsv1.ReplicaSet{}, 0, byNamespace)
		e.ctrl, err = replicaset.NewReplicaSetController(ctx, r.client, pods, rsInformer{e.owners}, opts...)
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

// gainedPriority is the work-queue priority of the owners a share change
// brought, above the default of every other event.
const gainedPriority = 10

// prioritize queues each owner the epoch's owner informer delivers whose
// hash is in gained at gainedPriority, ahead of the owners the replica
// held before; the controller's own handler queues it too, and the queue
// keeps the higher priority.
func (r *ringRunner) prioritize(e *epoch, gained shard.Ranges) error {
	if gained.Empty() {
		return nil
	}
	q, ok := e.ctrl.Queue().(interface {
		AddWithOpts(workqueue.AddOpts, ...string)
	})
	if !ok {
		return nil
	}
	key, prio := r.o.shard.key(), gainedPriority
	_, err := e.owners.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			m, err := meta.Accessor(obj)
			if err != nil {
				return
			}
			h, err := shard.HashObject(m, key)
			if err != nil || !gained.Contains(h) {
				return
			}
			if k, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
				q.AddWithOpts(workqueue.AddOpts{Priority: &prio}, k)
			}
		},
	})
	return err
}

// guard fences each sync with the member's Guard over the owner's hash. An
// owner the epoch's cache does not hold is skipped: it is outside the share,
// or gone, and a sync could only forget it. An owner the member may not
// work on now but still wants (its Lease is being renewed, or the range is
// being taken up again) is looked at again a renew interval later, by when
// the member holds it or has given it up: a refusal never loses the owner.
// One another member wants is skipped; that member syncs it when it takes
// the range up, since a new epoch syncs every owner of its share.
//
// An owner the previous epoch was writing for when it stopped, or shortly
// before, waits until a safety margin after the stop (settling). Stopping
// cancelled its writes in flight, but a cancelled create may still be
// stored after this epoch listed its pods: the sync must see it arrive
// through the watch before it counts, or it creates the same pods again.
// An owner the previous epoch did not hold came from another member, whose
// drain keeps its range claimed until its writes have settled (or from a
// dead member, whose Lease expired a margin after it could last write).
//
// The hash is read from the cache here and the sync reads the owner again;
// an owner deleted and re-created under the same name in between, with a
// UID in a range this replica gave up at that very moment, would be synced
// under the old UID's guard. The epoch's cache only ever holds owners of
// its share, which keeps that to a hand-over racing a re-creation.
func (r *ringRunner) guard(e *epoch) podset.SyncGuard {
	key := r.o.shard.key()
	return func(ctx context.Context, ownerKey string) (context.Context, func(), time.Duration, bool) {
		obj, ok, err := e.owners.GetIndexer().GetByKey(ownerKey)
		if err != nil || !ok {
			return ctx, nil, 0, false
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return ctx, nil, 0, false
		}
		h, err := shard.HashObject(m, key)
		if err != nil {
			return ctx, nil, 0, false
		}
		if wait, ok := e.settling.holds(ownerKey, time.Now()); ok {
			return ctx, nil, wait, false
		}
		guarded, done, ok := r.member.Guard(ctx, h)
		if ok {
			e.syncs.begin(ownerKey)
			return guarded, func() { done(); e.syncs.end(ownerKey, time.Now()) }, 0, true
		}
		r.metrics.fenced.Inc()
		if r.member.Wants(h) {
			return guarded, nil, r.o.shard.renewInterval, false
		}
		return guarded, nil, 0, false
	}
}

// sweep queues, every sweep interval until ctx is done, the owners of the
// epoch's share whose status lags their spec. Events, a new epoch's initial
// list and the guard's retries wake every owner that needs work; the sweep
// bounds what a wake-up lost all the same can cost, to one interval, for a
// pass over the epoch's cache in memory.
func (r *ringRunner) sweep(ctx context.Context, e *epoch) {
	ticker := time.NewTicker(r.o.shard.sweepInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		for _, key := range lagging(e.owners.GetStore().List()) {
			e.ctrl.Queue().Add(key)
		}
	}
}

// lagging returns the keys of the owners whose status has not caught up
// with their spec: a generation not yet observed, or a replica count other
// than the one asked for. An owner without spec.replicas asks for one, as
// the API server defaults it.
func lagging(owners []any) []string {
	var keys []string
	for _, obj := range owners {
		var want, have int32
		var generation, observed int64
		switch o := obj.(type) {
		case *appsv1.ReplicaSet:
			want, have = ptr.Deref(o.Spec.Replicas, 1), o.Status.Replicas
			generation, observed = o.Generation, o.Status.ObservedGeneration
		case *v1.ReplicationController:
			want, have = ptr.Deref(o.Spec.Replicas, 1), o.Status.Replicas
			generation, observed = o.Generation, o.Status.ObservedGeneration
		default:
			continue
		}
		if observed < generation || have != want {
			if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
				keys = append(keys, key)
			}
		}
	}
	return keys
}

// resetQueueGauges zeroes the work queue's gauges once an epoch's
// controller has stopped: a queue shut down at once keeps its items, and
// with them its depth, while the next epoch's queue starts empty and
// publishes under the same name.
func (r *ringRunner) resetQueueGauges() {
	if r.queue == nil {
		return
	}
	name := "replicaset"
	if r.o.kind == kindReplicationController {
		name = "replicationmanager"
	}
	for _, g := range []any{r.queue.NewDepthMetric(name), r.queue.NewUnfinishedWorkSecondsMetric(name), r.queue.NewLongestRunningProcessorSecondsMetric(name)} {
		if s, ok := g.(interface{ Set(float64) }); ok {
			s.Set(0)
		}
	}
}

// owners and pods are the current epoch's cache sizes, for the metrics.
func (r *ringRunner) cached() (owners, pods int) {
	e := r.epoch.Load()
	if e == nil {
		return 0, 0
	}
	return len(e.owners.GetStore().ListKeys()), len(e.pods.GetStore().ListKeys())
}

// serverFiltered is 1 when the last owner list was filtered by the API
// server, 0 when by this client, -1 before the first list.
func (r *ringRunner) serverFiltered() float64 {
	e := r.epoch.Load()
	if e == nil {
		return -1
	}
	filtered, known := e.ownerLW.ServerFiltered()
	switch {
	case !known:
		return -1
	case filtered:
		return 1
	}
	return 0
}

func podListWatch(c kubernetes.Interface, ns string) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return c.CoreV1().Pods(ns).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return c.CoreV1().Pods(ns).Watch(ctx, o)
		},
	}
}

func ownerListWatch(c kubernetes.Interface, kind, ns string) *cache.ListWatch {
	if kind == kindReplicationController {
		return &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return c.CoreV1().ReplicationControllers(ns).List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return c.CoreV1().ReplicationControllers(ns).Watch(ctx, o)
			},
		}
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return c.AppsV1().ReplicaSets(ns).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return c.AppsV1().ReplicaSets(ns).Watch(ctx, o)
		},
	}
}

// The typed informer interfaces the controller constructors take, over an
// informer of one share.
type (
	podInformer struct{ inf cache.SharedIndexInformer }
	rsInformer  struct{ inf cache.SharedIndexInformer }
	rcInformer  struct{ inf cache.SharedIndexInformer }
)

func (p podInformer) Informer() cache.SharedIndexInformer { return p.inf }
func (p podInformer) Lister() corelisters.PodLister {
	return corelisters.NewPodLister(p.inf.GetIndexer())
}
func (p rsInformer) Informer() cache.SharedIndexInformer { return p.inf }
func (p rsInformer) Lister() appslisters.ReplicaSetLister {
	return appslisters.NewReplicaSetLister(p.inf.GetIndexer())
}
func (p rcInformer) Informer() cache.SharedIndexInformer { return p.inf }
func (p rcInformer) Lister() corelisters.ReplicationControllerLister {
	return corelisters.NewReplicationControllerLister(p.inf.GetIndexer())
}
