package podsetcr

import (
	"context"
	"fmt"
	"net/http"

	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/ctrlruntime"
	"github.com/ctrlkit/ctrlkit/podset"
)

// Controller is podset's core as a plain controller-runtime
// reconcile.Reconciler. SetupWithManager registers it with controller-runtime's
// builder, so the manager runs it as any controller: its queue (the
// priority queue when enabled), leader election, warm-up, reconcile
// timeouts and workqueue metrics apply. The event handlers that feed it
// (PodHandler, OwnerHandler) keep podset's expectations.
type Controller[O client.Object] struct {
	name      string
	core      *podset.Reconciler[O]
	hasSynced []cache.InformerSynced
}

var _ reconcile.Reconciler = (*Controller[client.Object])(nil)

// Reconcile syncs the owner named by req with podset's Reconcile and
// applies its Result. An owner held by the read-your-writes guard is polled
// (podset.WithStaleCachePoll) rather than failed, so it neither feeds the
// failure backoff nor draws on the rate limiter's shared bucket.
func (c *Controller[O]) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := c.core.Reconcile(ctx, ctrlruntime.Key(req))
	return ctrlruntime.Result(res.RequeueAfter, err, c.core.StaleCachePoll())
}

// Name is the controller's name: its work queue's name in the workqueue
// metrics and the source of its events.
func (c *Controller[O]) Name() string { return c.name }

// Core is the podset controller behind the reconciler, for its
// Expectations.
func (c *Controller[O]) Core() *podset.Reconciler[O] { return c.core }

// ReadyzCheck reports ready once the manager's pod and owner informers have
// synced; mgr.AddReadyzCheck takes it.
func (c *Controller[O]) ReadyzCheck(*http.Request) error {
	for _, synced := range c.hasSynced {
		if !synced() {
			return fmt.Errorf("podset controller %s: informers not synced", c.name)
		}
	}
	return nil
}
