// Package claim is the controller-ref manager: it adopts orphans that match a
// controller's selector, releases owned objects that no longer match, and
// leaves objects owned by other controllers alone, with upstream's decision
// table and byte-for-byte patch bodies.
//
// ObjectControllerRefManager[T] claims objects of any kind through a Patcher:
// a typed client (NewReplicaSetPatcher), the dynamic client
// (NewDynamicPatcher, which sends JSON merge patches for custom resources) or
// a fake. PodControllerRefManager and ReplicaSetControllerRefManager keep
// upstream's method names; the pod manager writes through a PodPatcher, which
// every podcontrol.PodControl is.
//
// Create a manager per sync with RecheckDeletionTimestamp as its CanAdopt
// function, and pass it the objects from the informer cache:
//
//	m := claim.NewPodControllerRefManager(podControl, rs, selector, kind,
//		claim.RecheckDeletionTimestamp(getLiveRS))
//	pods, err := m.ClaimPods(ctx, cachedPods)
//
// A nil Selector matches nothing, like labels.Nothing(). Loggers come from the
// context.
//
// IndexByController files objects by controller reference for an informer
// (AddControllerIndexer); an IndexListing kept per owner lists them from
// that index and reads the store again only when one of them changed.
package claim
