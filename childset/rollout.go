package childset

import (
	"context"
	"errors"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/history"
	"github.com/ctrlkit/ctrlkit/status"
)

// RolloutSpec is implemented by a Spec whose owners roll their children
// out to a new template gradually, revision by revision, rather than
// leaving children of an older template as they are. The Reconciler also
// needs WithRevisions, where the revisions are kept (see revisions.go for
// what they hold and how children are labelled).
//
// When RollingUpdate reports true, each sync records the template in the
// update revision, creates missing children at it (or, within the
// partition, at the current revision), and replaces the children of older
// revisions within the bounds, through planRollout: interchangeable
// children are surged and removed (old revisions first), indexed ones are
// replaced in place of their index, highest first. Children count as
// available through the Kind's Ready, MinReadySpec and ReadySinceKind, as
// the status counts them. Status gains the revision fields.
//
// Spec.NewChild must then build the same child for the same owner every
// time: any difference is a new revision, and a rollout.
//
// When it reports false the owner is synced as if the Spec did not
// implement RolloutSpec: children of every template count alike and none
// is labelled. An owner being deleted is synced that way too: no revision
// is written for it.
//
// The history limit and the collision count are optional
// (HistoryLimitSpec, CollisionCountSpec), for kinds that have such fields.
type RolloutSpec[O Object] interface {
	// RollingUpdate is the owner's rolling update, and whether it has one.
	// Bounds that RollingUpdate.Bounds refuses get a Warning event
	// (ReasonRollingUpdateInvalid) and no creation or deletion.
	RollingUpdate(owner O) (RollingUpdate, bool)
}

// PauseSpec is implemented by a RolloutSpec whose owners can be paused,
// as a Deployment's spec.paused: a paused owner scales, creating children
// at the current revision and deleting updated ones first, but replaces
// none, and its Progressing condition says so (ProgressSpec).
type PauseSpec[O Object] interface {
	Paused(owner O) bool
}

// ProgressSpec is implemented by a RolloutSpec whose owners report a
// Progressing condition with a deadline, as a Deployment's
// progressDeadlineSeconds: the core computes the condition with
// status.Progress, as upstream's Deployment controller would, hands it to
// StatusSpec.UpdateStatus in Status.Conditions, and syncs the owner again
// when the deadline passes. The update revision stands for the Deployment's
// new ReplicaSet in the reasons, and its name in the messages.
type ProgressSpec[O Object] interface {
	// ProgressDeadlineSeconds is how long a rollout may go without a step
	// forward before it is reported stuck; nil or math.MaxInt32 means no
	// deadline and no Progressing condition.
	ProgressDeadlineSeconds(owner O) *int32
	// StoredProgress is the owner's status as last written: its counts
	// (Status.Replicas, UpdatedReplicas, ReadyReplicas, AvailableReplicas)
	// and its conditions.
	StoredProgress(owner O) (status.ProgressCounts, []appsv1.DeploymentCondition)
}

// DefaultRevisionHistoryLimit is how many revisions no child is at are kept
// for an owner whose Spec is not a HistoryLimitSpec, as Deployments and
// StatefulSets keep by default.
const DefaultRevisionHistoryLimit = 10

// HistoryLimitSpec is implemented by a RolloutSpec whose owners say how many
// revisions to keep, as revisionHistoryLimit does.
type HistoryLimitSpec[O Object] interface {
	// RevisionHistoryLimit is how many revisions no child is at are kept,
	// besides the current and update ones; below zero counts as zero.
	RevisionHistoryLimit(owner O) int32
}

// CollisionCountSpec is implemented by a RolloutSpec whose owners persist
// Status.CollisionCount, as StatefulSets and Deployments do. Without it
// every sync starts from zero: a revision whose name collides is then
// looked for under the same names again, which costs a request only when a
// new template is recorded, since a recorded revision is found by its
// content.
type CollisionCountSpec[O Object] interface {
	// CollisionCount is the count Status.CollisionCount last reported, as
	// persisted in the owner's status; nil means zero.
	CollisionCount(owner O) *int32
}

// errRefused tells Reconcile that the owner's spec was refused with an
// event: nothing is written and retrying cannot help.
var errRefused = errors.New("childset: spec refused")

// rollout is one sync's view of an owner's rolling update.
type rollout[C Object] struct {
	settings RollingUpdate
	bounds   RolloutBounds
	// revisions are the owner's, oldest first, update included.
	revisions       []*appsv1.ControllerRevision
	update, current *appsv1.ControllerRevision
	collisionCount  int32
	// created reports that this sync created the update revision.
	created bool
	// paused holds every child at its revision (PauseSpec).
	paused bool
	// template is the update revision's child, from Spec.NewChild.
	template C
}

// partition is how many of replicas children stay at the current
// revision: all of them while paused, so the owner scales without
// replacing any child.
func (ro *rollout[C]) partition(replicas int32) int32 {
	if ro.paused {
		return max(replicas, ro.settings.Partition)
	}
	return ro.settings.Partition
}

// prepareRollout returns the owner's rollout, its update revision written
// and its history pruned, or nil when the owner does not roll out.
func (r *Reconciler[O, C]) prepareRollout(ctx context.Context, owner O, template C, selector labels.Selector, children, active []C) (*rollout[C], error) {
	spec, ok := r.spec.(RolloutSpec[O])
	if !ok || owner.GetDeletionTimestamp() != nil {
		return nil, nil
	}
	settings, on := spec.RollingUpdate(owner)
	if !on {
		return nil, nil
	}
	bounds, err := settings.Bounds(r.spec.Replicas(owner))
	if err != nil {
		r.warn(owner, ReasonRollingUpdateInvalid, "%v; nothing is created or deleted until the object changes", err)
		return nil, errRefused
	}
	ro := &rollout[C]{settings: settings, bounds: bounds, template: template}
	if p, ok := spec.(PauseSpec[O]); ok {
		ro.paused = p.Paused(owner)
	}
	if counted, ok := spec.(CollisionCountSpec[O]); ok {
		if count := counted.CollisionCount(owner); count != nil {
			ro.collisionCount = *count
		}
	}
	revisions, err := r.ownedRevisions(ctx, owner, selector)
	if err != nil {
		return nil, err
	}
	if ro.update, ro.created, err = r.updateRevision(ctx, owner, template, revisions, &ro.collisionCount); err != nil {
		return nil, err
	}
	ro.revisions = withRevision(revisions, ro.update)
	ro.current = currentRevision(ro.revisions, ro.update, active)
	// The rollout does not wait for the history: a revision that could not
	// be pruned is pruned by a later sync.
	limit := int32(DefaultRevisionHistoryLimit)
	if limited, ok := spec.(HistoryLimitSpec[O]); ok {
		limit = limited.RevisionHistoryLimit(owner)
	}
	if err := r.pruneRevisions(ctx, ro, children, int(max(limit, 0))); err != nil {
		klog.FromContext(ctx).Error(err, "Pruning revisions", "kind", r.gvk.Kind, "owner", klog.KObj(owner))
	}
	return ro, nil
}

// manageRollout performs one pass of planRollout over every child of the
// owner, those being deleted included; ready[i] is whether children[i] is
// ready, read once for the whole sync.
func (r *Reconciler[O, C]) manageRollout(ctx context.Context, owner O, ro *rollout[C], ref *metav1.OwnerReference, expKey string, children []C, ready []bool) (Result, error) {
	// The plan deletes, among children alike, the first given: the ones a
	// ScaleInSpec names go first. An indexed plan orders by index, and its
	// first given also wins a contested index, so names stay out of it.
	var named map[string]bool
	if !r.cfg.indexed {
		named = r.markedForDeletion(owner, children, r.namedToDeleteFirst(owner))
	}
	order := r.deletionOrder(children, ready, named, len(children))
	ordered := make([]C, len(order))
	orderedReady := make([]bool, len(order))
	for i, at := range order {
		ordered[i], orderedReady[i] = children[at], ready[at]
	}
	var plans inPlacePlans[C]
	input, refused := r.rolloutState(owner, expKey, ro, ordered, orderedReady, &plans)
	plan := planRollout(input)
	victims := make([]C, len(plan.Delete))
	for i, at := range plan.Delete {
		victims[i] = ordered[at]
	}
	r.refuseInPlace(owner, refused, ro.update)
	var inPlaceErr error
	var refusedNow bool
	if len(plan.UpdateInPlace) > 0 {
		updated := make([]C, len(plan.UpdateInPlace))
		for i, at := range plan.UpdateInPlace {
			updated[i] = ordered[at]
		}
		refusedNow, inPlaceErr = r.updateInPlace(ctx, owner, expKey, ro, &plans, updated)
	}
	var res Result
	var err error
	if r.cfg.indexed {
		res, err = r.rollIndexed(ctx, owner, ro, ref, expKey, plan, victims)
	} else {
		res, err = r.rollInterchangeable(ctx, owner, ro, ref, expKey, plan, victims)
	}
	if refusedNow {
		// Nothing the refusal wrote will sync the owner again.
		res.RequeueAfter = shorter(res.RequeueAfter, time.Millisecond)
	}
	return res, errors.Join(inPlaceErr, err)
}

// rolloutState is planRollout's input for owner's children, in deletion
// order. Under an in-place strategy it says which old children can be
// updated in place (their patches kept in plans), counts a child this
// replica updated in place as updated and unavailable until the cache
// shows it so, and returns how many old children an InPlaceOnly strategy
// leaves at their revision.
func (r *Reconciler[O, C]) rolloutState(owner O, expKey string, ro *rollout[C], ordered []C, ready []bool, plans *inPlacePlans[C]) (rolloutInput, int) {
	avail := r.availabilityOf(owner)
	updated := revisionHash(ro.update)
	replicas := r.spec.Replicas(owner)
	strategy := r.updateStrategy(owner)
	s := rolloutInput{
		Replicas: replicas, Bounds: ro.bounds, Partition: ro.partition(replicas),
		Indexed: r.cfg.indexed, Burst: r.cfg.burst, InPlaceOnly: strategy == InPlaceOnly,
		Children: make([]rolloutChild, len(ordered)),
	}
	old, stuck := 0, 0
	for i, c := range ordered {
		available, _ := avail.check(c, ready[i])
		child := rolloutChild{
			Index:     r.indexOf(owner, c),
			Updated:   childHash(c) == updated,
			Available: available,
			Deleting:  c.GetDeletionTimestamp() != nil,
		}
		if to, ok := r.inFlight.updating(expKey, c.GetName(), childHash(c), avail.now); ok && to == updated {
			child.Updated, child.Available = true, false
		}
		if !child.Updated && !child.Deleting && strategy != Recreate {
			old++
			_, child.InPlace = r.patchesFor(ro, plans, c)
			if child.InPlace && r.refusedInPlace.holds(expKey, c.GetName(), updated, avail.now) {
				child.InPlace = false
			}
			if !child.InPlace {
				stuck++
			}
		}
		s.Children[i] = child
	}
	if strategy != InPlaceOnly || old <= int(s.Partition) {
		stuck = 0
	}
	return s, stuck
}

// indexOf is c's index in indexed mode: the one its IndexLabel gives, if
// its name is that index's name; -1 otherwise (it holds no wanted index).
func (r *Reconciler[O, C]) indexOf(owner O, c C) int {
	i := childIndex(c.GetLabels())
	if !r.cfg.indexed || i < 0 || r.cfg.nameFunc(owner.GetName(), i) != c.GetName() {
		return -1
	}
	return i
}

// rollInterchangeable deletes the plan's victims and creates its children
// in one pass: planRollout keeps the bounds whichever completes first. The
// deletions are expected by key and the creations by count in one record.
func (r *Reconciler[O, C]) rollInterchangeable(ctx context.Context, owner O, ro *rollout[C], ref *metav1.OwnerReference, expKey string, plan rolloutPlan, victims []C) (Result, error) {
	fresh, err := r.rolloutChildren(ro, plan.CreateCurrent, plan.CreateUpdated)
	if err != nil {
		return Result{}, err
	}
	// A victim its gate holds stays, counted as the plan counted it: the
	// creations are within the bounds whichever completes first.
	victims, wait, gateErr := r.gateDeletions(ctx, owner, expKey, victims)
	if len(victims) > 0 {
		if err := r.exp.ExpectDeletions(expKey, childKeys(victims)); err != nil {
			return Result{}, err
		}
		r.exp.RaiseExpectations(expKey, len(fresh), 0)
	} else if len(fresh) > 0 {
		if err := r.exp.ExpectCreations(expKey, len(fresh)); err != nil {
			return Result{}, err
		}
	}
	deleteErr := r.sendDeletions(ctx, owner, expKey, victims)
	createErr := r.createCounted(ctx, owner, ref, expKey, fresh)
	return Result{RequeueAfter: wait}, errors.Join(gateErr, deleteErr, createErr)
}

// rolloutChildren builds the children to create at the current and at the
// update revision, each labelled with its revision's hash.
func (r *Reconciler[O, C]) rolloutChildren(ro *rollout[C], current, updated int) ([]C, error) {
	out := make([]C, 0, current+updated)
	if current > 0 {
		template, err := ro.currentTemplate()
		if err != nil {
			return nil, err
		}
		for range current {
			out = append(out, atRevision(template, ro.current))
		}
	}
	for range updated {
		out = append(out, atRevision(ro.template, ro.update))
	}
	return out, nil
}

// rollIndexed creates the plan's missing indices or, when there is none to
// create, deletes its victims: a named-creation record and a deletion
// record cannot be pending for one owner at once (see manageIndexed), so
// the deletions wait for the next pass. A name held by an object the owner
// does not control is skipped with an event and a retry; one held by a
// child of the owner holding no index is skipped silently, as it is about
// to be deleted.
func (r *Reconciler[O, C]) rollIndexed(ctx context.Context, owner O, ro *rollout[C], ref *metav1.OwnerReference, expKey string, plan rolloutPlan, victims []C) (Result, error) {
	var res Result
	var fresh []C
	add := func(indices []int, template C, rev *appsv1.ControllerRevision) error {
		for _, i := range indices {
			name := r.cfg.nameFunc(owner.GetName(), i)
			holder, found, err := r.kind.Get(owner.GetNamespace(), name)
			switch {
			case err != nil:
				return err
			case found && !metav1.IsControlledBy(holder, owner):
				r.nameConflict(owner, name, holder, true)
				res.RequeueAfter = r.cfg.conflictRetry
			case !found:
				fresh = append(fresh, indexedChild(atRevision(template, rev), name, i))
			}
		}
		return nil
	}
	if len(plan.CreateCurrentIndices) > 0 {
		template, err := ro.currentTemplate()
		if err != nil {
			return res, err
		}
		if err := add(plan.CreateCurrentIndices, template, ro.current); err != nil {
			return res, err
		}
	}
	if err := add(plan.CreateUpdatedIndices, ro.template, ro.update); err != nil {
		return res, err
	}
	if len(fresh) > 0 {
		created, err := r.createNamed(ctx, owner, ref, expKey, fresh)
		return Result{RequeueAfter: max(res.RequeueAfter, created.RequeueAfter)}, err
	}
	deleted, err := r.deleteChildren(ctx, owner, expKey, victims)
	return Result{RequeueAfter: shorter(res.RequeueAfter, deleted.RequeueAfter)}, err
}

// currentTemplate is the child the current revision records.
func (ro *rollout[C]) currentTemplate() (C, error) {
	if ro.current == ro.update {
		return ro.template, nil
	}
	return decodeTemplate(ro.current, ro.template)
}

// atRevision is a copy of template labelled as a child of rev.
func atRevision[C Object](template C, rev *appsv1.ControllerRevision) C {
	child := template.DeepCopyObject().(C)
	child.SetLabels(history.CloneAndAddLabel(child.GetLabels(), history.ControllerRevisionHashLabel, revisionHash(rev)))
	return child
}

// fillStatus adds the revision fields to st; a nil rollout adds none.
func (ro *rollout[C]) fillStatus(st *Status, active []C) {
	if ro == nil {
		return
	}
	st.CurrentRevision, st.UpdateRevision = ro.current.Name, ro.update.Name
	st.CollisionCount = ro.collisionCount
	current, updated := revisionHash(ro.current), revisionHash(ro.update)
	for _, c := range active {
		h := childHash(c)
		if h == updated {
			st.UpdatedReplicas++
		}
		if h == current {
			st.CurrentReplicas++
		}
	}
}
