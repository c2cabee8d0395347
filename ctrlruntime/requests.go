package ctrlruntime

import (
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/consistency"
	ctrlkitqueue "github.com/ctrlkit/ctrlkit/workqueue"
)

// Between ctrlkit's cores, which speak of owner keys ("namespace/name", or
// the name of a cluster-scoped owner) and results, and controller-runtime,
// which speaks of requests: one translation, used by every host here.

// RequestQueue is the work queue controller-runtime hands to event handlers.
type RequestQueue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// Key is the ctrlkit owner key of req.
func Key(req reconcile.Request) string {
	return ctrlkitqueue.Key(req.Namespace, req.Name)
}

// EnqueueKey adds the request for a ctrlkit owner key to q (see Enqueue). A
// malformed key is dropped.
func EnqueueKey(q RequestQueue, key string, initialList bool) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil || name == "" {
		return
	}
	Enqueue(q, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: namespace, Name: name}}, initialList)
}

// Enqueue adds req to q. Objects from the initial list go in at
// controller-runtime's low priority when q has priorities, as
// controller-runtime's own handlers do, so real changes are served first.
func Enqueue(q RequestQueue, req reconcile.Request, initialList bool) {
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok && initialList {
		low := handler.LowPriority
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: &low}, req)
		return
	}
	q.Add(req)
}

// Result turns a ctrlkit core's answer into controller-runtime's. An owner
// held by the read-your-writes guard (an error matching
// consistency.ErrStaleCache) is not a failure: it is looked at again after
// stalePoll, outside the rate limiter, whose per-item backoff and shared
// bucket are for real failures. Any other error goes back to
// controller-runtime, which retries with its rate limiter.
func Result(requeueAfter time.Duration, err error, stalePoll time.Duration) (reconcile.Result, error) {
	if consistency.IsStaleCache(err) {
		return reconcile.Result{RequeueAfter: stalePoll}, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: requeueAfter}, nil
}
