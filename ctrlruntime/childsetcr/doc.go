// Package childsetcr hosts childset, the Set core that keeps N children of
// any kind for an owner, in a controller-runtime manager, as a plain
// reconcile.Reconciler registered with controller-runtime's own builder:
// its queue (priorities included), warm-up, metrics, reconcile timeout and
// backoff apply as for any controller.
//
// A user writes the two adapters childset asks for, minus what the manager
// supplies: a Spec (the child to create, and the owner's fields, at once
// through Describe or a getter each) and a Kind (whether a child is ready),
// then one call:
//
//	r, err := childsetcr.SetupWithManager[*v1.WorkerSet, *v1.Worker](mgr, workerSetSpec{}, workerKind{},
//		childsetcr.WithChildSetOptions(childset.WithBurstReplicas(100)),
//		childsetcr.WithControllerOptions(controller.Options{MaxConcurrentReconciles: 4}))
//
// The short Spec of a kind laid out as a Deployment is two methods
// (ctrlruntime/examples/workerset is one, status and rolling updates
// included, in 40 lines):
//
//	func (workerSetSpec) Describe(s *v1.WorkerSet) childset.RolloutFields {
//		return childset.RolloutFields{Fields: childset.Fields{Replicas: s.Spec.Replicas,
//			Selector: s.Spec.Selector, Status: (*childset.StatusFields)(&s.Status)},
//			RollingUpdate: (*childset.RollingUpdate)(s.Spec.Strategy.RollingUpdate)}
//	}
//	func (workerSetSpec) NewChild(s *v1.WorkerSet) (*v1.Worker, error) { ... }
//
// Owners are read from the manager's cache, children are listed from it by
// controller reference (a field index, ControllerField), and created,
// adopted, released and deleted through the manager's client, with events
// from its recorder. ChildHandler feeds the core's expectations from the
// child informer's events, so a lagging cache never yields an extra child,
// and enqueues the owner each event concerns, or, for an orphan, the
// owners whose selector matches it. OwnerHandler forgets the expectations
// of a deleted owner.
//
// A Spec whose Describe gives Fields.Status, or that implements
// StatusSetter, has the sync's counts written to its owners' status
// subresource, only when they change (see ExampleStatusSetter).
//
// A Spec whose Describe returns childset.RolloutFields, or that implements
// childset.RolloutSpec, gets rolling updates
// with no further option: its revisions are ControllerRevisions kept
// through crhistory over the manager's client and cache, and a revision
// event syncs its owner. RBAC: apps/controllerrevisions get, list, watch,
// create, update, patch, delete; the scheme must hold apps/v1.
//
// WithSharding runs the controller on every replica, each working on its
// share of the owners of a shard ring (package shardcr).
//
// The pieces are exported for controllers assembled by hand: Reconciler,
// ChildHandler, OwnerHandler, Lister and AddControllerIndex.
package childsetcr
