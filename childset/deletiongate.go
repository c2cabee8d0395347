package childset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// DeletionGateSpec is implemented by a Spec whose owners hold the deletion
// of a child, for a scale-in or a replacement in a rollout, until the child
// is ready to go: drained, its work handed over (a pre-delete hook, as
// OpenKruise's lifecycle hooks and kube-xset's PreDelete give).
//
// A child the core chose to delete is first marked, in one patch: the
// gate's label set to DeletionGatePending, and the moment of the request in
// the DeletionRequestedAnnotation. Whoever drains it watches for the label
// and releases it by changing or removing the label; a Spec that is also a
// DeletionReleaser may release it too. The core deletes the child at its
// first sync after the release, or once the gate's timeout has passed
// since the request, with a Warning event. Meanwhile the child counts as it
// did, so a held gate never lets the set exceed its bounds: a scale-in
// waits, and a rollout creates no more than its surge allows. Children
// already marked are the first chosen again, so a held scale-in does not
// mark more children than it deletes.
//
// The gate holds only the core's own deletions: a deleted owner's children
// are deleted by the garbage collector, whatever their marks.
type DeletionGateSpec[O Object] interface {
	// DeletionGate is owner's gate; a zero Label means none.
	DeletionGate(owner O) DeletionGate
}

// DeletionReleaser is implemented by a DeletionGateSpec that can tell a
// marked child is ready to go without an external actor clearing its label
// (a drained condition on the child, say).
type DeletionReleaser[O Object, C Object] interface {
	DeletionReleased(owner O, child C) bool
}

// DeletionGate is a pre-delete gate.
type DeletionGate struct {
	// Label is the key of the label that holds a marked child; it must be
	// a valid label key.
	Label string
	// Timeout is how long a marked child is held at most; zero means
	// DefaultDeletionGateTimeout.
	Timeout time.Duration
}

const (
	// DeletionGatePending is the gate label's value on a child the core
	// wants to delete; any other value, or none, releases it.
	DeletionGatePending = "pending"
	// DeletionRequestedAnnotation holds when (RFC 3339) the core marked a
	// child for deletion. A value that does not parse, or lies in the
	// future (another replica's clock), is written again with this
	// replica's time, which the timeout then counts from.
	DeletionRequestedAnnotation = "childset.ctrlkit.io/deletion-requested"
	// DefaultDeletionGateTimeout bounds a gate without a timeout of its own.
	DefaultDeletionGateTimeout = 10 * time.Minute
	// ReasonDeletionGateTimeout is the Warning event of a child deleted
	// because its gate's timeout passed.
	ReasonDeletionGateTimeout = "DeletionGateTimeout"
)

// deletionGate is owner's gate, and whether it has one.
func (r *Reconciler[O, C]) deletionGate(owner O) (DeletionGate, bool) {
	spec, ok := r.spec.(DeletionGateSpec[O])
	if !ok {
		return DeletionGate{}, false
	}
	g := spec.DeletionGate(owner)
	if g.Timeout <= 0 {
		g.Timeout = DefaultDeletionGateTimeout
	}
	return g, g.Label != ""
}

// markedForDeletion adds to named the children already marked for
// deletion, so that a held scale-in chooses them again; named may be nil.
func (r *Reconciler[O, C]) markedForDeletion(owner O, children []C, named map[string]bool) map[string]bool {
	if _, ok := r.deletionGate(owner); !ok {
		return named
	}
	for _, c := range children {
		if _, marked := c.GetAnnotations()[DeletionRequestedAnnotation]; marked {
			if named == nil {
				named = map[string]bool{}
			}
			named[c.GetName()] = true
		}
	}
	return named
}

// gateDeletions splits victims into those to delete now and those their
// gate holds, marking the ones not marked yet. wait is how soon a held one
// times out. Without a gate every victim goes now.
func (r *Reconciler[O, C]) gateDeletions(ctx context.Context, owner O, expKey string, victims []C) (now []C, wait time.Duration, err error) {
	gate, ok := r.deletionGate(owner)
	if !ok || len(victims) == 0 {
		return victims, 0, nil
	}
	releaser, _ := r.spec.(DeletionReleaser[O, C])
	clock := r.cfg.Clock.Now()
	var errs []error
	for _, c := range victims {
		requested, marked := c.GetAnnotations()[DeletionRequestedAnnotation]
		if marked && (c.GetLabels()[gate.Label] != DeletionGatePending || (releaser != nil && releaser.DeletionReleased(owner, c))) {
			now = append(now, c)
			continue
		}
		at, perr := time.Parse(time.RFC3339, requested)
		if !marked || perr != nil || at.After(clock) {
			// Not marked yet, or marked at a time that cannot be right:
			// (re)mark it now, which the timeout counts from.
			if err := r.markForDeletion(ctx, expKey, c, gate, clock); err != nil {
				errs = append(errs, err)
			}
			wait = shorter(wait, gate.Timeout)
			continue
		}
		if left := at.Add(gate.Timeout).Sub(clock); left > 0 {
			wait = shorter(wait, left)
			continue
		}
		klog.FromContext(ctx).Info("Deletion gate timed out", "child", klog.KObj(c), "gate", gate.Label, "timeout", gate.Timeout)
		if r.cfg.recorder != nil {
			r.cfg.recorder.Eventf(owner, v1.EventTypeWarning, ReasonDeletionGateTimeout,
				"Deleting %s: its gate %s was not released within %v", c.GetName(), gate.Label, gate.Timeout)
		}
		now = append(now, c)
	}
	if len(errs) > 0 {
		return now, wait, fmt.Errorf("marking children for deletion: %w", errors.Join(errs...))
	}
	return now, wait, nil
}

// markForDeletion sets c's gate label to DeletionGatePending and records
// the request's time, in one patch.
func (r *Reconciler[O, C]) markForDeletion(ctx context.Context, expKey string, c C, gate DeletionGate, now time.Time) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels":      map[string]string{gate.Label: DeletionGatePending},
		"annotations": map[string]string{DeletionRequestedAnnotation: now.UTC().Format(time.RFC3339)},
	}})
	if err != nil {
		return err
	}
	obj, err := r.writer.PatchObject(ctx, c.GetNamespace(), c.GetName(), patch)
	if err != nil {
		return fmt.Errorf("marking %s/%s: %w", c.GetNamespace(), c.GetName(), err)
	}
	if !isNil(obj) {
		r.wrote(expKey, obj)
	}
	return nil
}

// shorter is the shorter of two waits, zero meaning none.
func shorter(a, b time.Duration) time.Duration {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}
