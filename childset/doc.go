// Package childset is the Set core for children of any kind: it keeps an
// owner's number of children (ConfigMaps, PVCs, custom resources, pods),
// creating and deleting through one narrow writer, with expectations so a
// lagging informer cache never yields an extra child.
//
// Two identity modes:
//
//   - Interchangeable (the default): children get generated names; the
//     core creates what is missing and deletes the first of the deletion
//     order: not ready first, then the lowest DeletionCostAnnotation
//     (controller.kubernetes.io/pod-deletion-cost, read on children of
//     every kind), then the newest (DefaultOrder; WithDeletionOrder
//     replaces it). Each child's order key is read once per sync, and
//     only the first burst is picked out, not the whole set sorted.
//   - Indexed (WithIndexedNames): children are named <owner>-<index> (or by
//     a function of yours) and labelled IndexLabel. The core creates the
//     lowest missing indices and deletes the highest first; creations are
//     expected by name. An orphan that matches the selector and holds a
//     wanted name is adopted; a foreign object holding one gets a Warning
//     event (ReasonNameConflict) and a retry, never a second child. A pass
//     that creates deletes nothing; deletions wait until no name is
//     missing.
//
// The claim remembers the child objects it kept without a write (an
// informer never changes an object in place), so a steady sync claims only
// the children that are new or changed; each child's readiness is read
// once per sync.
//
// The core is pure: Reconciler.Reconcile(ctx, key) decides what one sync
// does and returns a Result carrying the requeue intent; it never touches a
// queue (a test parses this package's core files and fails if they import
// or mention one). Whoever drives a queue applies the Result: Controller,
// this package's client-go driver (driver.go), or a controller-runtime
// reconciler. Before any write the selector must be non-empty, valid and
// match the child template's labels (CheckSelector), and the claim
// (adoption of matching orphans, release of children that stopped
// matching, through claim's generic ref manager) must have succeeded.
//
// With WithReadYourWrites (a guard over the child informer's store; off by
// default), an owner is held until the child cache has seen the core's own
// creations and adoptions (the error matches
// consistency.ErrStaleCache; drivers poll it). A Spec that can read the
// owner live (LiveReader) has that copy checked before any adoption, as
// upstream does.
//
// A Spec that writes the owner's status implements StatusSpec: every sync
// ends with the counts it saw (Status), available counted after the
// owner's minReadySeconds (MinReadySpec) from when each child became ready
// (ReadySinceKind), and the Result asks to look again when the next ready
// child becomes available.
//
// A Spec that implements RolloutSpec, given WithRevisions, rolls children
// out to a new template: the template is recorded as a ControllerRevision
// (package history; a rollback reuses its earlier revision, idle ones are
// pruned to the history limit), each child carries its revision's hash
// label, and each sync paces the replacement within maxSurge,
// maxUnavailable and a partition; indexed children are replaced in place,
// highest index first. Status gains the revision fields. A Spec that does
// not, or an owner whose RollingUpdate says false, is synced as before. A
// paused owner (PauseSpec) scales without replacing; a ProgressSpec gets
// the owner's Progressing condition, as a Deployment's, with a deadline.
//
// A Spec that implements ScaleInSpec names the children a scale-down
// deletes first (OpenKruise's podsToDelete): interchangeable children
// named go before the deletion order, and during a rollout before children
// alike; indexed mode honours the names only among the children holding no
// wanted name, since a wanted name deleted would be created again. Names
// never delete more than the scale-down asks for, and the burst cap holds.
//
// A Spec that implements DeletionGateSpec holds each deletion it chose, for
// a scale-in or a replacement, until the child is ready to go: the core
// marks the child with the gate's label and waits until someone clears it
// (or the Spec, a DeletionReleaser, says so), or its timeout passes. A held
// child counts as before, so the set keeps its bounds meanwhile.
//
// A Spec that implements ClaimTemplateSpec gives indexed children
// PersistentVolumeClaims of their own, as a StatefulSet's claim templates
// do (WithClaims gives the core their writer and cache): a child is created
// once its claims, named ClaimName(template, child), exist, and the
// retention policy says, through owner references, whether the garbage
// collector deletes them with the owner or with a scaled-down child.
//
// A kind with rules of its own specialises the core through optional parts
// of its Spec and Kind, as podset does for pods with upstream's: traits
// read once per child object for its status (TraitSpec), children that
// finish and stay (FinishedKind), its own choice of victims (VictimSpec),
// a status computed from the children (ChildStatusSpec), and upstream's
// feature gates, read at every sync (WithFeatureGates).
//
// The adapter convention. A kind's adapters are a Spec and a Kind; all the
// core needs beyond the required methods is an optional method, found by
// a type assertion as io.WriterTo is, whose absence has a documented
// default that behaves as if the owner had no such field: no
// minReadySeconds is 0, no history limit is DefaultRevisionHistoryLimit
// (10), no collision count field starts every sync from zero, no pause is
// unpaused, no progress deadline reports no Progressing condition, no
// ReadySince counts a ready child available at once, no status method
// writes no status. A host that reads owners for the Spec (childsetcr)
// also takes the short form: one Describe(owner) returning Fields, or
// RolloutFields for a kind that rolls out (the return type is what says
// so), in place of the getters, with nil meaning each field's default
// (Fields.DeletionGate standing for DeletionGateSpec);
// Fields.Status, the owner's status converted to *StatusFields, is where
// the collision count and stored progress are read and each sync's status
// is written, the collision count by Status.Fields' rule (the sync's while
// the owner rolls out, the stored one kept while it does not). A kind of
// pods takes podset.PodReadiness as its Kind's readiness. Children of any kind
// are ranked by DeletionCostAnnotation: the name is upstream's pod
// annotation, kept so that pods and other children rank alike.
//
// Use it in a few lines: write a Spec for the owner and a Kind for the
// child (embed IndexerLister for the listing), then
//
//	r := childset.NewReconciler[*Owner, *v1.ConfigMap](spec, kind, configMapControl,
//		childset.WithIndexedNames(nil), childset.WithEventRecorder(recorder))
//	res, err := r.Reconcile(ctx, "namespace/name")
//
// or childset.New(ownerInformer, childInformer, spec, kind, control, opts...)
// and Run(ctx) for a controller with its own workers.
package childset
