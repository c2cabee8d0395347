package gang

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/podstate"
)

// This file is the code a user adds to adapter.go for rolling updates:
// RollingGangs (childset.RolloutSpec, MinReadySpec and StatusSpec, through
// childset.DeploymentLayout) and Pods' ReadySince. doc.go states its size.

// RollingGangs is Gangs with rolling updates (spec.strategy.rollingUpdate,
// spec.revisionHistoryLimit, spec.minReadySeconds) and a status written
// through the status subresource, laid out as a Deployment's.
type RollingGangs struct {
	Gangs
	childset.DeploymentLayout
}

// NewRollingGangs is Gangs with rolling updates, its status written through
// client.
func NewRollingGangs(gangs Gangs, client dynamic.Interface) RollingGangs {
	return RollingGangs{Gangs: gangs, DeploymentLayout: childset.DeploymentLayout{Client: client, Resource: Resource}}
}

// NewChild is Gangs's, after checking the rollout fields: a malformed one
// is refused with a Warning event (TemplateInvalid) and nothing is written.
func (r RollingGangs) NewChild(gang *unstructured.Unstructured) (*v1.Pod, error) {
	if err := r.Check(gang); err != nil {
		return nil, err
	}
	return r.Gangs.NewChild(gang)
}

// ReadySince is when the pod's Ready condition last became true.
func (Pods) ReadySince(pod *v1.Pod) time.Time { return podstate.ReadyTime(pod).Time }
