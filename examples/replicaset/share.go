package replicaset

import (
	"context"

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

	"github.com/ctrlkit/ctrlkit/podset"
	"github.com/ctrlkit/ctrlkit/shard"
	"github.com/ctrlkit/ctrlkit/workqueue"
)

// gainedPriority is the work-queue priority of the owners a share change
// brought, above the default of every other event.
const gainedPriority = 10

// NewForShare builds the controller of k over one share of a ring, as a
// shard.Runner's build function: its informers list and watch the pods and
// owners of namespace ("" for all) through watches, over e's share, the
// owners hashed by owners and the pods by pods (with their owner's
// namespace, or shard.ByController); its syncs write through client and
// are fenced by e.Fence; the owners of gained ranges are queued first; and
// the Runner's sweep queues the owners whose status lags their spec. The
// caller sets the Work's SweepInterval, and may wrap its Run.
func NewForShare(ctx context.Context, k Kind, e *shard.Epoch, client, watches kubernetes.Interface, namespace string, owners, pods shard.Sharding, opts ...Option) (*shard.Work, error) {
	podInf, err := e.Informer(listWatch(watches.CoreV1().Pods(namespace)), &v1.Pod{}, pods)
	if err != nil {
		return nil, err
	}
	opts = append(opts[:len(opts):len(opts)], podset.WithSyncGuard(e.Fence))
	var ownerInf cache.SharedIndexInformer
	var ctrl *Controller
	if k == ReplicationControllers {
		if ownerInf, err = e.Informer(listWatch(watches.CoreV1().ReplicationControllers(namespace)), &v1.ReplicationController{}, owners); err == nil {
			ctrl, err = NewReplicationManager(ctx, client, podInformer{podInf}, rcInformer{ownerInf}, opts...)
		}
	} else {
		if ownerInf, err = e.Informer(listWatch(watches.AppsV1().ReplicaSets(namespace)), &appsv1.ReplicaSet{}, owners); err == nil {
			ctrl, err = NewReplicaSetController(ctx, client, podInformer{podInf}, rsInformer{ownerInf}, opts...)
		}
	}
	if err != nil {
		return nil, err
	}
	q := ctrl.Queue()
	return &shard.Work{
		Informers: []cache.SharedIndexInformer{podInf, ownerInf},
		Owners:    ownerInf, OwnerHash: owners.Hash,
		Run:   func(ctx context.Context) { _ = ctrl.Run(ctx) }, // nil once stopped; misuse is impossible here
		Drain: ctrl.Drain, HasSynced: ctrl.HasSynced,
		Queue: q.Add, QueueFirst: queueFirst(q),
		Behind: lagging,
	}, nil
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

// The typed informer interfaces the constructors take, over an informer of
// one share.
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
