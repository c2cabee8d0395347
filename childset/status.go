package childset

import (
	"context"
	"time"
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
}

// StatusSpec is implemented by a Spec that writes the owner's status. The
// core calls UpdateStatus at the end of every sync of an existing owner,
// with a deadline; the Spec compares and writes only what changed.
type StatusSpec[O Object] interface {
	UpdateStatus(ctx context.Context, owner O, status Status) error
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

// writeStatus computes the status of active and writes it through the
// Spec, when the Spec writes one, and says when a ready child that is not
// yet available becomes available (0: none), so the driver looks again
// then.
func (r *Reconciler[O, C]) writeStatus(ctx context.Context, owner O, active []C, terminating int, manageErr error) (time.Duration, error) {
	writer, writes := r.spec.(StatusSpec[O])
	var minReady time.Duration
	if m, ok := r.spec.(MinReadySpec[O]); ok {
		minReady = time.Duration(max(m.MinReadySeconds(owner), 0)) * time.Second
	}
	since, _ := r.kind.(ReadySinceKind[C])
	now := r.cfg.clock.Now()
	st := Status{
		Replicas: int32(len(active)), TerminatingReplicas: int32(terminating),
		ObservedGeneration: owner.GetGeneration(), ManageErr: manageErr,
	}
	var next time.Duration
	for _, c := range active {
		if !r.kind.Ready(c) {
			continue
		}
		st.ReadyReplicas++
		if minReady == 0 || since == nil {
			st.AvailableReplicas++
			continue
		}
		at := since.ReadySince(c)
		if at.IsZero() {
			continue
		}
		if wait := at.Add(minReady).Sub(now); wait > 0 {
			if next == 0 || wait < next {
				next = wait
			}
			continue
		}
		st.AvailableReplicas++
	}
	if !writes {
		return next, nil
	}
	ctx, cancel := context.WithTimeout(ctx, apiCallTimeout)
	defer cancel()
	return next, writer.UpdateStatus(ctx, owner, st)
}
