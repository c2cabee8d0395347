package podset

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/status"
)

// Kind describes an owner type O to the controller: what its spec asks for
// (Spec), how to read it from the informer cache and from the API server,
// and how to write its status. Write one per owner type, typed (a pointer to
// a generated API type) or unstructured; O must also be a runtime.Object,
// which New checks.
//
// Every method must be safe for concurrent use: workers call them in
// parallel, for different owners.
type Kind[O metav1.Object] interface {
	Spec[O]
	// Get reads the owner from the informer cache. A missing owner must
	// give an error for which apierrors.IsNotFound is true, as listers do.
	Get(namespace, name string) (O, error)
	// GetUncached reads the owner from the API server, bypassing the cache:
	// adoption re-checks that the owner is not being deleted
	// (kubernetes#42639).
	GetUncached(ctx context.Context, namespace, name string) (O, error)
	// UpdateStatus writes the status computed from in and returns the owner
	// as stored. It must not modify owner, which is the cached object.
	UpdateStatus(ctx context.Context, owner O, in StatusInput) (O, error)
}

// Spec is the part of a Kind that reads what an owner asks for: its kind,
// desired count, selector, template and minReadySeconds. Frameworks that
// supply the reads and the status write themselves (ctrlruntime's podsetcr)
// ask their users for this part alone.
type Spec[O metav1.Object] interface {
	// GroupVersionKind is the owner's kind; it goes into the controllerRef
	// of every pod the controller creates or adopts.
	GroupVersionKind() schema.GroupVersionKind
	// Replicas is the desired pod count. Objects that bypassed API
	// defaulting may have none: return upstream's default of 1 then. A
	// negative value is treated as 0.
	Replicas(owner O) int32
	// Selector converts the owner's pod selector. An owner without a usable
	// selector (nil, empty or malformed) must return an error. The
	// controller refuses such an owner, and also one whose selector is empty
	// or does not match the template's labels: it records a Warning event,
	// writes the status with StatusInput.SpecErr, and touches none of its
	// pods until the owner changes.
	Selector(owner O) (labels.Selector, error)
	// Template is the pod template new pods are created from. nil counts as
	// a template without labels, which a usable selector does not match.
	Template(owner O) *v1.PodTemplateSpec
	// MinReadySeconds is how long a ready pod must stay ready to count as
	// available.
	MinReadySeconds(owner O) int32
}

// SiblingLister is the optional part of a Kind: owners that share a
// controller with another (the ReplicaSets of one Deployment). When a Kind
// implements it, a scale-down ranks pods by how many of the siblings' pods
// share their node, as upstream does; otherwise only the owner's own pods
// are counted.
type SiblingLister[O metav1.Object] interface {
	// Siblings returns the owners controlled by the same controller as
	// owner, owner included. An owner without a controller returns an error
	// or nothing.
	Siblings(owner O) ([]O, error)
}

// ScaleInKind is the optional part of a Kind whose owners name the pods a
// scale-down deletes first, as OpenKruise CloneSet's
// scaleStrategy.podsToDelete does (and childset.ScaleInSpec for other
// kinds, with the same method). The named active pods go first, ranked
// among themselves by upstream's order; the rest are chosen by upstream's
// ranking as without names. A scale-down never deletes more pods than it
// asks for, and the burst cap holds. A name that matches no active pod of
// the owner (unknown, empty, listed twice, another owner's pod) is
// ignored; a Kind that names nothing syncs exactly as one without the
// method.
type ScaleInKind[O metav1.Object] interface {
	// ChildrenToDeleteFirst returns the names of the owner's pods that a
	// scale-down deletes before any other.
	ChildrenToDeleteFirst(owner O) []string
}

// StatusInput is what a sync observed, for Kind.UpdateStatus.
type StatusInput struct {
	// Active are the owner's active pods (neither terminating nor finished)
	// after adoption and release.
	Active []*v1.Pod
	// Terminating are the owner's pods being deleted. It is nil when the
	// DeploymentReplicaSetTerminatingReplicas gate is off.
	Terminating []*v1.Pod
	// TerminatingReplicas says whether status.terminatingReplicas should
	// be written (the DeploymentReplicaSetTerminatingReplicas gate).
	TerminatingReplicas bool
	// ManageErr is the error creating or deleting pods, if any; upstream
	// turns it into a ReplicaFailure condition.
	ManageErr error
	// SpecErr is set when the sync refused the owner's spec (see
	// childset.SpecError): nothing was claimed, created or deleted, Active and
	// Terminating are the pods the owner already controls, and ManageErr is
	// nil. A Kind whose status has conditions reports it as one, as the
	// examples' ReplicaSet and ReplicationController kinds do with a
	// ReplicaFailure condition of reason SpecErr.Reason; the condition goes
	// with the next sync that accepts the spec.
	SpecErr *childset.SpecError
	// Now is the instant the counts are evaluated at; availability is
	// measured against it.
	Now time.Time

	templateLabels  map[string]string
	minReadySeconds int32
	// counts are Counts' answer when counted is set: the sync counted the
	// pods while it claimed them.
	counts  status.ReplicaCounts
	counted bool
}

// Counts counts the active pods the way upstream fills a ReplicaSet's
// status: all of them, those carrying every template label, the ready ones,
// and those available at Now.
func (in StatusInput) Counts() status.ReplicaCounts {
	if in.counted {
		return in.counts
	}
	return status.CountReplicas(in.Active, in.templateLabels, in.minReadySeconds, in.Now)
}
