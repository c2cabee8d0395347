package podsetcr

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/crclient"
	"github.com/ctrlkit/ctrlkit/podset"
)

// Controller runs a podset controller as a manager Runnable that needs
// leader election: the manager starts it once it holds the lease, after its
// caches have started, and cancels it when the lease is lost or the manager
// stops. Build it with NewControllerManagedBy.
//
// Like a controller-runtime controller, it touches the cluster only when it
// starts: then it takes the pod and owner informers from the manager's
// cache, registers podset's handlers and pod-by-owner index on them, and
// runs podset's workers. Instances that are not the leader watch nothing
// for it and fill no queue.
type Controller[O client.Object] struct {
	name     string
	kind     podset.Kind[O]
	owner    client.Object // an empty owner, to ask the cache for its informer
	cache    crcache.Informers
	client   client.Client        // writes pods
	recorder record.EventRecorder // records pod control's events
	opts     []podset.Option
	logger   logr.Logger

	started atomic.Bool
	core    atomic.Pointer[podset.Controller[O]]
}

var (
	_ manager.Runnable               = (*Controller[client.Object])(nil)
	_ manager.LeaderElectionRunnable = (*Controller[client.Object])(nil)
)

// Start builds the podset controller on the manager cache's informers and
// runs it until ctx is done. A cancelled context stops at once, in-flight
// syncs cancelled and queued owners dropped (podset's Run), which is what a
// lost lease needs. Start may be called only once.
func (c *Controller[O]) Start(ctx context.Context) error {
	if !c.started.CompareAndSwap(false, true) {
		return fmt.Errorf("podsetcr: controller %s started twice", c.name)
	}
	ctx = klog.NewContext(ctx, c.logger)
	ownerInf, err := sharedInformer(ctx, c.cache, c.owner)
	if err != nil {
		return err
	}
	podInf, err := sharedInformer(ctx, c.cache, &corev1.Pod{})
	if err != nil {
		return err
	}
	// Pods are written through the manager's client, the one writer podset
	// wraps with its events, deadline and read-your-writes recording. A pod
	// writer or pod control in c.opts wins.
	opts := append([]podset.Option{podset.WithPodWriter(crclient.NewWriter[*corev1.Pod](c.client))}, c.opts...)
	core, err := podset.New(ctx, nil, podInformer{podInf}, ownerInf, c.kind, opts...)
	if err != nil {
		return fmt.Errorf("podsetcr: controller %s: %w", c.name, err)
	}
	c.core.Store(core)
	return core.Run(ctx)
}

// NeedLeaderElection is true: only the leader creates and deletes pods.
func (c *Controller[O]) NeedLeaderElection() bool { return true }

// Name is the controller's name: its work queue's name in the workqueue
// metrics and the source of its events.
func (c *Controller[O]) Name() string { return c.name }

// Core is the running podset controller, for its Expectations and Queue;
// nil until Start has built it.
func (c *Controller[O]) Core() *podset.Controller[O] { return c.core.Load() }

// ReadyzCheck reports ready once the controller has synced its caches and
// runs its workers; mgr.AddReadyzCheck takes it. An instance that is not
// the leader never starts the controller, so use it only where followers
// should count as not ready.
func (c *Controller[O]) ReadyzCheck(*http.Request) error {
	if core := c.core.Load(); core == nil || !core.HasSynced() {
		return fmt.Errorf("podset controller %s is not running", c.name)
	}
	return nil
}
