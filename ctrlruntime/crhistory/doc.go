// Package crhistory keeps ControllerRevisions through a controller-runtime
// client: a history.Interface whose reads come from the manager's cache
// (by label selector, in the owner's namespace) and whose writes go through
// the manager's client, each with a deadline. It is what childsetcr gives
// childset.WithRevisions for a Spec that rolls out (childset.RolloutSpec).
//
//	h := crhistory.New(mgr.GetClient(), mgr.GetCache(), crhistory.WithLiveReader(mgr.GetAPIReader()))
//	core := childset.NewReconciler(spec, kind, writer, childset.WithRevisions(h))
//
// New is history.NewHistoryFor over Store, controller-runtime's calls, so
// its rules are history's own, the same as over client-go: creation handles
// name collisions (a taken name with the same data is that revision; other
// data advances the collision count), updates retry conflicts with the
// cached copy, adoption and release send claim's strategic merge patches.
// The manager's scheme must hold apps/v1.
package crhistory
