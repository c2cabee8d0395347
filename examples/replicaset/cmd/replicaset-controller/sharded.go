package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/podset"
	"github.com/ctrlkit/ctrlkit/shard"
	"github.com/ctrlkit/ctrlkit/workqueue"
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

func (s shardConfig) enabled() bool { return s.ring != "" }

// key is what the owners are hashed by.
func (s shardConfig) key() shard.Key {
	if s.by == shardByNamespace {
		return shard.KeyNamespace
	}
	return shard.KeyUID
}

// defaultShardIdentity is the pod's name when the Deployment passes it
// through the downward API, else the host name (a pod's name too).
func defaultShardIdentity() string {
	if name := os.Getenv("POD_NAME"); name != "" {
		return name
	}
	name, _ := os.Hostname()
	return name
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

// newRing joins the ring and returns the runner of a controller per share,
// its metrics registered. Owners hash by --shard-by; pods follow by namespace
// (which the API server can filter) or by their controller's UID (which
// only the client can).
func newRing(o options, cs clients, opts []replicaset.Option, metrics *controllerMetrics) (*shard.Runner, error) {
	s := o.shard
	m, err := shard.NewMember(cs.leases.CoordinationV1(), s.namespace, s.ring, s.identity,
		shard.WithLeaseDuration(s.leaseDuration), shard.WithRenewInterval(s.renewInterval), shard.WithSafetyMargin(s.safetyMargin),
		// Short enough that a renewal that times out leaves the member
		// trusted until the next one.
		shard.WithWriteTimeout(min(shard.DefaultWriteTimeout, (s.leaseDuration-s.safetyMargin-s.renewInterval)/2)))
	if err != nil {
		return nil, fmt.Errorf("joining ring %q: %w", s.ring, err)
	}
	owners, pods := shard.ByKey(s.key()), shard.ByController()
	if s.by == shardByNamespace {
		pods = owners
	}
	r := shard.NewRunner(m, func(ctx context.Context, e *shard.Epoch) (*shard.Work, error) {
		podLW, err := e.ListWatch(listWatch(cs.watches.CoreV1().Pods(o.namespace)), pods)
		if err != nil {
			return nil, err
		}
		ownerLW, err := e.ListWatch(ownerListWatch(cs.watches, o.kind, o.namespace), owners)
		if err != nil {
			return nil, err
		}
		return newShareController(ctx, o, cs.requests, podLW, ownerLW, append(slices.Clone(opts), podset.WithSyncGuard(e.Fence)), metrics)
	})
	return r, registerRingMetrics(metrics.registry, r)
}

// gainedPriority is the work-queue priority of the owners a share change
// brought, above the default of every other event.
const gainedPriority = 10

// newShareController builds the informers and the controller of one share.
func newShareController(ctx context.Context, o options, client kubernetes.Interface, podLW, ownerLW cache.ListerWatcher, opts []replicaset.Option, metrics *controllerMetrics) (*shard.Work, error) {
	byNamespace := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	pods := cache.NewSharedIndexInformer(podLW, &v1.Pod{}, 0, byNamespace)
	var owners cache.SharedIndexInformer
	var ctrl *replicaset.Controller
	var err error
	if o.kind == kindReplicationController {
		owners = cache.NewSharedIndexInformer(ownerLW, &v1.ReplicationController{}, 0, byNamespace)
		ctrl, err = replicaset.NewReplicationManager(ctx, client, podInformer{pods}, rcInformer{owners}, opts...)
	} else {
		owners = cache.NewSharedIndexInformer(ownerLW, &appsv1.ReplicaSet{}, 0, byNamespace)
		ctrl, err = replicaset.NewReplicaSetController(ctx, client, podInformer{pods}, rsInformer{owners}, opts...)
	}
	if err != nil {
		return nil, err
	}
	q := ctrl.Queue()
	w := &shard.Work{
		Informers: []cache.SharedIndexInformer{pods, owners},
		Owners:    owners, OwnerHash: shard.ByKey(o.shard.key()).Hash,
		Run: func(ctx context.Context) {
			_ = ctrl.Run(ctx) // nil once stopped; misuse is impossible here
			metrics.resetQueueGauges(o.kind)
		},
		Drain: ctrl.Drain, HasSynced: ctrl.HasSynced, Queue: q.Add,
		Behind: lagging, SweepInterval: o.shard.sweepInterval,
	}
	w.QueueFirst = queueFirst(q)
	return w, nil
}

// queueFirst queues an owner at gainedPriority, or is nil when q takes no
// priorities. The controller's own handler queues a gained owner too; the
// queue keeps the higher priority.
func queueFirst(q any) func(key string) {
	pq, ok := q.(interface {
		AddWithOpts(workqueue.AddOpts, ...string)
	})
	if !ok {
		return nil
	}
	prio := gainedPriority
	return func(key string) { pq.AddWithOpts(workqueue.AddOpts{Priority: &prio}, key) }
}

// lagging reports an owner whose status has not caught up with its spec: a
// generation not yet observed, or a replica count other than the one asked
// for. An owner without spec.replicas asks for one, as the API server
// defaults it.
func lagging(obj any) bool {
	switch o := obj.(type) {
	case *appsv1.ReplicaSet:
		return o.Status.ObservedGeneration < o.Generation || o.Status.Replicas != ptr.Deref(o.Spec.Replicas, 1)
	case *v1.ReplicationController:
		return o.Status.ObservedGeneration < o.Generation || o.Status.Replicas != ptr.Deref(o.Spec.Replicas, 1)
	}
	return false
}

// registerRingMetrics publishes, besides the controller's own metrics, how
// much of the hash space the replica holds, how often its share changed,
// what its caches hold, and how far the other replicas' clocks are off.
func registerRingMetrics(reg *prometheus.Registry, r *shard.Runner) error {
	m := r.Member()
	cached := func(i int) func() float64 {
		return func() float64 {
			if c := r.Stats().Cached; len(c) > i {
				return float64(c[i])
			}
			return 0
		}
	}
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	counter := func(name, help string, f func(shard.RunnerStats) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(f(r.Stats())) })
	}
	for _, c := range []prometheus.Collector{
		gauge("ctrlkit_shard_held_fraction", "Fraction of the hash space this replica holds now (0 to 1).", func() float64 { return m.Held().Fraction() }),
		counter("ctrlkit_shard_handovers_total", "Changes of this replica's share: ranges gained or given up.", func(s shard.RunnerStats) uint64 { return s.Handovers }),
		counter("ctrlkit_shard_restarts_total", "Informer and controller starts, one per share this replica worked on.", func(s shard.RunnerStats) uint64 { return s.Epochs }),
		counter("ctrlkit_shard_fenced_syncs_total", "Syncs skipped because the owner's hash was no longer this replica's.", func(s shard.RunnerStats) uint64 { return s.FencedSyncs }),
		gauge("ctrlkit_shard_owners", "Owners in this replica's cache: those of its share.", cached(1)),
		gauge("ctrlkit_shard_pods", "Pods in this replica's cache: those of its share.", cached(0)),
		gauge("ctrlkit_shard_members", "Live members of the ring as this replica last saw them.", func() float64 { return float64(len(m.Members())) }),
		gauge("ctrlkit_shard_server_filtered", "1 when the API server filtered the last owner list by the share (ShardedListAndWatch), 0 when this client did, -1 before the first list.", func() float64 {
			s := r.Stats()
			switch {
			case !s.ServerFilterKnown:
				return -1
			case s.ServerFiltered:
				return 1
			}
			return 0
		}),
		gauge("ctrlkit_shard_peer_clock_skew_seconds", "Largest offset of another ring member's clock from this replica's that their Lease renewals prove (a lower bound). The hand-over does not depend on it; alert on it for time sync.",
			func() float64 { return m.PeerClockSkew().Seconds() }),
	} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// listWatch lists and watches through one typed client.
func listWatch[L runtime.Object](c interface {
	List(context.Context, metav1.ListOptions) (L, error)
	Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
}) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc:  func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return c.List(ctx, o) },
		WatchFuncWithContext: c.Watch,
	}
}

func ownerListWatch(c kubernetes.Interface, kind, ns string) *cache.ListWatch {
	if kind == kindReplicationController {
		return listWatch(c.CoreV1().ReplicationControllers(ns))
	}
	return listWatch(c.AppsV1().ReplicaSets(ns))
}

// The typed informer interfaces the controller constructors take, over an
// informer of one share.
type (
	podInformer struct{ cache.SharedIndexInformer }
	rsInformer  struct{ cache.SharedIndexInformer }
	rcInformer  struct{ cache.SharedIndexInformer }
)

func (p podInformer) Informer() cache.SharedIndexInformer { return p.SharedIndexInformer }
func (p podInformer) Lister() corelisters.PodLister       { return corelisters.NewPodLister(p.GetIndexer()) }
func (p rsInformer) Informer() cache.SharedIndexInformer  { return p.SharedIndexInformer }
func (p rsInformer) Lister() appslisters.ReplicaSetLister {
	return appslisters.NewReplicaSetLister(p.GetIndexer())
}
func (p rcInformer) Informer() cache.SharedIndexInformer { return p.SharedIndexInformer }
func (p rcInformer) Lister() corelisters.ReplicationControllerLister {
	return corelisters.NewReplicationControllerLister(p.GetIndexer())
}
