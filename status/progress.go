package status

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The reasons of the Progressing condition, as upstream's Deployment
// controller writes them; tools such as kubectl rollout status read them.
const (
	ReasonNewRevisionCreated       = "NewReplicaSetCreated"
	ReasonFoundNewRevision         = "FoundNewReplicaSet"
	ReasonRevisionUpdated          = "ReplicaSetUpdated"
	ReasonNewRevisionAvailable     = "NewReplicaSetAvailable"
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	ReasonPaused                   = "DeploymentPaused"
	ReasonResumed                  = "DeploymentResumed"
)

// ProgressCounts are the replica counts of a rolling set's status.
type ProgressCounts struct {
	Replicas, UpdatedReplicas, ReadyReplicas, AvailableReplicas int32
}

// ProgressInput is what one sync of a rolling set knows for its
// Progressing condition.
type ProgressInput struct {
	// Kind and Name are the owner's, for messages ("Deployment", "web").
	Kind, Name string
	// RevisionKind and Revision name the update revision's object, for
	// messages ("ReplicaSet", "web-5d8f9"); an empty Revision names the
	// owner instead.
	RevisionKind, Revision string
	// RevisionCreated reports that this sync created the update revision.
	RevisionCreated bool

	// Desired is spec.replicas.
	Desired int32
	// Paused is spec.paused: a paused set scales but does not roll.
	Paused bool
	// DeadlineSeconds is spec.progressDeadlineSeconds; nil or
	// math.MaxInt32 means no deadline, and no Progressing condition.
	DeadlineSeconds *int32
	// Previous are the counts of the status as stored, Current those this
	// sync computed.
	Previous, Current ProgressCounts
}

func (in ProgressInput) hasDeadline() bool {
	return in.DeadlineSeconds != nil && *in.DeadlineSeconds != math.MaxInt32
}

func (in ProgressInput) deadline() time.Duration {
	return time.Duration(*in.DeadlineSeconds) * time.Second
}

// subject is what a message is about: the update revision, or the owner.
func (in ProgressInput) subject() string {
	if in.Revision != "" {
		return fmt.Sprintf("%s %q", in.RevisionKind, in.Revision)
	}
	return fmt.Sprintf("%s %q", in.Kind, in.Name)
}

// complete reports that every wanted replica is updated and available, and
// no other remains.
func (in ProgressInput) complete() bool {
	c := in.Current
	return c.UpdatedReplicas == in.Desired && c.Replicas == in.Desired && c.AvailableReplicas == in.Desired
}

// progressed reports any step forward since the stored status: more
// updated, ready or available replicas, or fewer old ones.
func (in ProgressInput) progressed() bool {
	p, c := in.Previous, in.Current
	return c.UpdatedReplicas > p.UpdatedReplicas ||
		c.Replicas-c.UpdatedReplicas < p.Replicas-p.UpdatedReplicas ||
		c.ReadyReplicas > p.ReadyReplicas ||
		c.AvailableReplicas > p.AvailableReplicas
}

// Progress returns conds with the Progressing condition of one sync of a
// rolling set, as upstream's Deployment controller writes it in a sync
// that rolls (or that is paused), and how long until the deadline should
// be checked again (0: no need). It never changes conds; the other
// conditions are kept in order, and a changed Progressing condition goes
// last.
//
// With a deadline, a paused set says so (Unknown, DeploymentPaused), and
// once resumed says that (DeploymentResumed), unless the deadline was
// already exceeded; a paused set is not checked for progress. A rolling
// sync first records the update revision (NewReplicaSetCreated when this
// sync created it, FoundNewReplicaSet when there was no condition yet),
// then: every replica updated and available is NewReplicaSetAvailable;
// any step forward since the stored status is ReplicaSetUpdated, its
// update time now (the deadline counts from there); no step for longer
// than the deadline is False, ProgressDeadlineExceeded. A completed
// rollout stays so while no replica is old. Without a deadline the
// condition is removed.
//
// now stamps new conditions, and the deadline is judged against it.
func Progress(conds []appsv1.DeploymentCondition, in ProgressInput, now time.Time) ([]appsv1.DeploymentCondition, time.Duration) {
	if !in.hasDeadline() {
		if in.Paused {
			return conds, 0
		}
		return withoutType(conds, string(appsv1.DeploymentProgressing), deploymentConditionState), 0
	}
	p := progress{conds: conds, now: metav1.NewTime(now)}
	if !p.is(ReasonProgressDeadlineExceeded) {
		switch {
		case in.Paused && !p.is(ReasonPaused):
			p.set(v1.ConditionUnknown, ReasonPaused, in.Kind+" is paused")
		case !in.Paused && p.is(ReasonPaused):
			p.set(v1.ConditionUnknown, ReasonResumed, in.Kind+" is resumed")
		}
	}
	if in.Paused {
		return p.conds, 0
	}
	switch {
	case in.RevisionCreated:
		p.set(v1.ConditionTrue, ReasonNewRevisionCreated, fmt.Sprintf("Created new %s %q", spaced(in.RevisionKind), in.Revision))
	case p.current() == nil:
		p.set(v1.ConditionTrue, ReasonFoundNewRevision, fmt.Sprintf("Found new %s %q", spaced(in.RevisionKind), in.Revision))
	}

	done := p.is(ReasonNewRevisionAvailable) && in.Current.Replicas == in.Current.UpdatedReplicas
	if !done {
		switch {
		case in.complete():
			p.set(v1.ConditionTrue, ReasonNewRevisionAvailable, in.subject()+" has successfully progressed.")
		case in.progressed():
			p.touch(in.subject() + " is progressing.")
		case p.timedOut(in.deadline()):
			p.set(v1.ConditionFalse, ReasonProgressDeadlineExceeded, in.subject()+" has timed out progressing.")
		}
	}
	return p.conds, p.recheck(in)
}

// progress is the conditions of one Progress call, as they change.
type progress struct {
	conds []appsv1.DeploymentCondition
	now   metav1.Time
}

// current is the Progressing condition, nil when there is none.
func (p *progress) current() *appsv1.DeploymentCondition {
	for i := range p.conds {
		if p.conds[i].Type == appsv1.DeploymentProgressing {
			return &p.conds[i]
		}
	}
	return nil
}

func (p *progress) is(reason string) bool {
	c := p.current()
	return c != nil && c.Reason == reason
}

// set puts a new Progressing condition last, unless the current one has
// its status and reason; a condition whose status does not change keeps
// its transition time.
func (p *progress) set(status v1.ConditionStatus, reason, msg string) {
	c := p.fresh(status, reason, msg)
	if old := p.current(); old != nil {
		if old.Status == status && old.Reason == reason {
			return
		}
		if old.Status == status {
			c.LastTransitionTime = old.LastTransitionTime
		}
	}
	p.replace(c)
}

// touch records progress: a True ReplicaSetUpdated condition updated now,
// even when one is there already, keeping the transition time of a True
// condition.
func (p *progress) touch(msg string) {
	c := p.fresh(v1.ConditionTrue, ReasonRevisionUpdated, msg)
	if old := p.current(); old != nil && old.Status == v1.ConditionTrue {
		c.LastTransitionTime = old.LastTransitionTime
	}
	p.replace(c)
}

func (p *progress) fresh(status v1.ConditionStatus, reason, msg string) appsv1.DeploymentCondition {
	return appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: status, Reason: reason, Message: msg,
		LastUpdateTime: p.now, LastTransitionTime: p.now}
}

func (p *progress) replace(c appsv1.DeploymentCondition) {
	p.conds = append(withoutType(p.conds, string(c.Type), deploymentConditionState), c)
}

// timedOut reports that no progress was recorded for longer than deadline.
func (p *progress) timedOut(deadline time.Duration) bool {
	c := p.current()
	switch {
	case c == nil || c.Reason == ReasonNewRevisionAvailable:
		return false
	case c.Reason == ReasonProgressDeadlineExceeded:
		return true
	}
	return c.LastUpdateTime.Add(deadline).Before(p.now.Time)
}

// recheck is how long until the deadline of a rollout still under way
// passes, and one second more, as upstream requeues; at least a second.
func (p *progress) recheck(in ProgressInput) time.Duration {
	c := p.current()
	if c == nil || in.complete() || c.Reason == ReasonProgressDeadlineExceeded {
		return 0
	}
	left := c.LastUpdateTime.Add(in.deadline()).Sub(p.now.Time)
	return max(left, 0) + time.Second
}

// spaced writes a kind as words: "ReplicaSet" becomes "replica set".
func spaced(kind string) string {
	var b strings.Builder
	for i, r := range kind {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte(' ')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

func deploymentConditionState(c appsv1.DeploymentCondition) conditionState {
	return conditionState{string(c.Type), c.Status, c.Reason}
}
