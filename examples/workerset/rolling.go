package workerset

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/ctrlkit/ctrlkit/childset"
)

// This file is the code a user adds to adapter.go for rolling updates:
// RollingSet (childset.RolloutSpec, MinReadySpec and StatusSpec, through
// childset.DeploymentLayout) and Workers' ReadySince. doc.go states its size.

// RollingSet is Set with rolling updates (spec.strategy.rollingUpdate,
// spec.revisionHistoryLimit, spec.minReadySeconds) and a status written
// through the status subresource, laid out as a Deployment's.
type RollingSet struct {
	Set
	childset.DeploymentLayout
}

// NewRollingSet is Set with rolling updates, its status written through
// client.
func NewRollingSet(sets Set, client dynamic.Interface) RollingSet {
	return RollingSet{Set: sets, DeploymentLayout: childset.DeploymentLayout{Client: client, Resource: SetResource}}
}

// NewChild is Set's, after checking the rollout fields: a malformed one
// is refused with a Warning event (TemplateInvalid) and nothing is written.
func (r RollingSet) NewChild(set *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if err := r.Check(set); err != nil {
		return nil, err
	}
	return r.Set.NewChild(set)
}

// ReadySince reads status.readySince (RFC 3339), which whoever marks the
// Worker ready sets; absent or malformed is the zero time.
func (Workers) ReadySince(worker *unstructured.Unstructured) time.Time {
	s, _, _ := unstructured.NestedString(worker.Object, "status", "readySince")
	t, _ := time.Parse(time.RFC3339, s)
	return t
}
