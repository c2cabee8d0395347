package childsetcr

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime"
)

// Reconciler hosts childset's core as a controller-runtime
// reconcile.Reconciler, so controller-runtime's controller (its queue and
// priorities, warm-up, metrics, reconcile timeout and backoff) drives it as
// any other. It adds nothing to the core's decisions: a request becomes the
// core's "namespace/name" key and the core's answer controller-runtime's
// (ctrlruntime.Result).
type Reconciler[O, C client.Object] struct {
	core *childset.Reconciler[O, C]
}

var _ reconcile.Reconciler = (*Reconciler[client.Object, client.Object])(nil)

// NewReconciler wraps core. A nil core panics.
func NewReconciler[O, C client.Object](core *childset.Reconciler[O, C]) *Reconciler[O, C] {
	if core == nil {
		panic("childsetcr: NewReconciler: nil core")
	}
	return &Reconciler[O, C]{core: core}
}

// Core is the childset core the reconciler drives: its expectations are
// the ones the handlers feed.
func (r *Reconciler[O, C]) Core() *childset.Reconciler[O, C] { return r.core }

// Reconcile syncs the owner req names. An owner held by the
// read-your-writes guard (childset.WithReadYourWrites) is polled after
// the core's stale-cache poll (childset.WithStaleCachePoll) rather than
// failed.
func (r *Reconciler[O, C]) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := r.core.Reconcile(ctx, ctrlruntime.Key(req))
	return ctrlruntime.Result(res.RequeueAfter, err, r.core.StaleCachePoll())
}
