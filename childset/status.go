package childset

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/internal/writedeadline"
	"github.com/ctrlkit/ctrlkit/status"
)

// Status is what a sync saw of an owner's children, for its status.
type Status struct {
	// Replicas counts the children not being deleted.
	Replicas int32
	// ReadyReplicas counts those the Kind calls ready.
	ReadyReplicas int32
	// AvailableReplicas counts the ready ones that have been ready for the
	// owner's minReadySeconds (see MinReadySpec and ReadySinceKind).
	AvailableReplicas int32
	// TerminatingReplicas counts the children being deleted.
	TerminatingReplicas int32
	// ObservedGeneration is the owner's generation the sync acted on.
	ObservedGeneration int64
	// ManageErr is why the sync's creations or deletions failed, if they
	// did; a Spec with conditions reports it (ReplicaFailure, as upstream).
	ManageErr error

	// The revision fields are filled when the owner rolls out (see
	// RolloutSpec) and zero otherwise.

	// UpdatedReplicas counts the children (not being deleted) at the
	// update revision.
	UpdatedReplicas int32
	// CurrentReplicas counts the children (not being deleted) at the
	// current revision; it equals UpdatedReplicas once the rollout is done.
	CurrentReplicas int32
	// CurrentRevision names the ControllerRevision of the children being
	// replaced; UpdateRevision names that of the owner's template. They are
	// equal once every child is updated.
	CurrentRevision, UpdateRevision string
	// CollisionCount is the count of hash collisions met creating
	// revisions. Persist it in the owner's status and return it from
	// CollisionCountSpec.CollisionCount, as StatefulSets and Deployments do.
	CollisionCount int32
	// SpecErr is set when the sync refused the owner's spec (see
	// SpecError): nothing was claimed, created or deleted, the counts are
	// of the children the owner already controls, and ManageErr is nil. A
	// Spec with conditions reports it, as upstream's ReplicaFailure, until
	// a sync accepts the spec.
	SpecErr *SpecError
	// Conditions are, for a ProgressSpec, the owner's stored conditions
	// with this sync's Progressing condition (see status.Progress); nil
	// otherwise. Persist them as they are.
	Conditions []appsv1.DeploymentCondition
}

// StatusSpec is implemented by a Spec that writes the owner's status. The
// core calls UpdateStatus at the end of every sync of an existing owner,
// with a deadline; the Spec compares and writes only what changed.
type StatusSpec[O Object] interface {
	UpdateStatus(ctx context.Context, owner O, status Status) error
}

// ChildStatusSpec is implemented by a Spec that computes its owner's status
// from the children themselves, as podset counts upstream's fully labeled
// pods. The core calls it in place of StatusSpec, with the same Status and
// the children the sync saw. It returns the owner as the API server stored
// it, so that with WithReadYourWrites the next sync waits until the cache
// shows the write; the zero O when nothing was written.
type ChildStatusSpec[O Object, C Object] interface {
	UpdateChildStatus(ctx context.Context, owner O, status Status, seen Seen[C]) (O, error)
}

// Seen is what a sync saw of an owner's children, for a ChildStatusSpec.
type Seen[C Object] struct {
	// Active are the owner's active children, and Traits theirs.
	Active []C
	Traits []Traits
	// Terminating are its children being deleted; nil when the
	// DeploymentReplicaSetTerminatingReplicas gate is off.
	Terminating []C
	// Now is the instant the Status's availability was measured at.
	Now time.Time
}

// MinReadySpec is implemented by a Spec whose owners say how long a ready
// child must stay ready to count as available, as minReadySeconds does.
type MinReadySpec[O Object] interface {
	MinReadySeconds(owner O) int32
}

// ReadySinceKind is implemented by a Kind that knows when a child became
// ready. Without it a ready child counts as available at once.
type ReadySinceKind[C Object] interface {
	// ReadySince is when child became ready; the zero time when not
	// ready or unknown.
	ReadySince(child C) time.Time
}

// availability decides which children of one owner count as available, at
// one instant. The status and the rollout both count through it, so a
// rollout never waits on a child the status calls available, or the other
// way round.
type availability[C Object] struct {
	since    ReadySinceKind[C] // nil: ready means available
	minReady time.Duration
	now      time.Time
}

func (r *Reconciler[O, C]) availabilityOf(owner O) availability[C] {
	a := availability[C]{now: r.cfg.Clock.Now()}
	if m, ok := r.spec.(MinReadySpec[O]); ok {
		a.minReady = time.Duration(max(m.MinReadySeconds(owner), 0)) * time.Second
	}
	a.since, _ = r.kind.(ReadySinceKind[C])
	return a
}

// check reports whether c, ready as given (the Kind's Ready, read once per
// sync), is available; for a ready child not yet available, wait is how
// long until it is (0 when that is unknown).
func (a availability[C]) check(c C, ready bool) (available bool, wait time.Duration) {
	if !ready {
		return false, 0
	}
	if a.minReady == 0 || a.since == nil {
		return true, 0
	}
	at := a.since.ReadySince(c)
	if at.IsZero() {
		return false, 0
	}
	// Available once minReadySeconds have passed, strictly, as upstream's
	// podutil.IsPodAvailable counts: at the very instant a child is not
	// yet, and is looked at again a nanosecond later.
	if wait := at.Add(a.minReady).Sub(a.now); wait >= 0 {
		return false, max(wait, time.Nanosecond)
	}
	return true, 0
}

// writeStatus computes the status of the children seen and writes it
// through the Spec, when the Spec writes one, and says when a ready child
// that is not yet available becomes available (0: none), so the driver
// looks again then. ro is the sync's rollout, nil when the owner does not
// roll out; specErr is set when the sync refused the spec.
func (r *Reconciler[O, C]) writeStatus(ctx context.Context, owner O, seen claimed[C], ro *rollout[C], manageErr error, specErr *SpecError) (time.Duration, error) {
	avail := r.availabilityOf(owner)
	st := Status{
		Replicas: int32(len(seen.active)), ObservedGeneration: owner.GetGeneration(), ManageErr: manageErr, SpecErr: specErr,
	}
	terminating := seen.terminating
	if !r.cfg.gates(DeploymentReplicaSetTerminatingReplicas) {
		terminating = nil
	}
	st.TerminatingReplicas = int32(len(terminating))
	next, waiting := time.Duration(0), false
	for i, c := range seen.active {
		ready := seen.traits[i].Ready()
		available, wait := avail.check(c, ready)
		if ready {
			st.ReadyReplicas++
		}
		if available {
			st.AvailableReplicas++
		} else if ready {
			waiting = true
		}
		if wait > 0 && (next == 0 || wait < next) {
			next = wait
		}
	}
	if waiting && next == 0 {
		// A ready child not available, and no clock says when it will
		// be: look again a whole minReadySeconds later, the last line of
		// defence against a child's unknown or skewed ready time.
		next = avail.minReady
	}
	ro.fillStatus(&st, seen.active)
	if recheck := r.progress(owner, ro, &st); recheck > 0 && (next == 0 || recheck < next) {
		next = recheck
	}
	switch spec := r.spec.(type) {
	case ChildStatusSpec[O, C]:
		in := Seen[C]{Active: seen.active, Traits: seen.traits, Terminating: terminating, Now: avail.now}
		written, err := writedeadline.Call(ctx, r.cfg.writeTimeout, "writing the status", func(ctx context.Context) (O, error) {
			return spec.UpdateChildStatus(ctx, owner, st, in)
		})
		if err == nil && r.guardOn() && !isNil(written) {
			r.cfg.guard.WroteAt(expectations.OwnerKeyFor(owner), r.ownerResource, written.GetResourceVersion())
		}
		return next, err
	case StatusSpec[O]:
		return next, writedeadline.Do(ctx, r.cfg.writeTimeout, "writing the status", func(ctx context.Context) error {
			return spec.UpdateStatus(ctx, owner, st)
		})
	}
	return next, nil
}

// progress fills st.Conditions for a ProgressSpec whose owner rolls out
// (ro not nil), and says when to look at its deadline again (0: no need).
func (r *Reconciler[O, C]) progress(owner O, ro *rollout[C], st *Status) time.Duration {
	spec, ok := r.spec.(ProgressSpec[O])
	if !ok || ro == nil {
		return 0
	}
	stored, conds := spec.StoredProgress(owner)
	var recheck time.Duration
	st.Conditions, recheck = status.Progress(conds, status.ProgressInput{
		Kind: r.gvk.Kind, Name: owner.GetName(),
		RevisionKind: "ControllerRevision", Revision: ro.update.Name, RevisionCreated: ro.created,
		Desired: r.spec.Replicas(owner), Paused: ro.paused, DeadlineSeconds: spec.ProgressDeadlineSeconds(owner),
		Previous: stored,
		Current: status.ProgressCounts{
			Replicas: st.Replicas, UpdatedReplicas: st.UpdatedReplicas,
			ReadyReplicas: st.ReadyReplicas, AvailableReplicas: st.AvailableReplicas,
		},
	}, r.cfg.Clock.Now())
	return recheck
}
