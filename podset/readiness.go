package podset

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/podstate"
)

// PodReadiness is the readiness half of a childset Kind for pods, for a
// set of pods run by the set core directly (a gang, a pool): a pod is
// ready by its Ready condition, since the condition's last transition.
// Embed it beside a Lister (childset.IndexerLister) and, for in-place
// updates, InPlace; or hand it to a host that lists children itself
// (ctrlruntime/childsetcr) as the whole Kind.
type PodReadiness struct{}

var _ childset.ReadySinceKind[*v1.Pod] = PodReadiness{}

// Ready reports the pod's Ready condition.
func (PodReadiness) Ready(pod *v1.Pod) bool { return podstate.IsReady(pod) }

// ReadySince is when the pod's Ready condition last turned true; the zero
// time when it is not ready.
func (PodReadiness) ReadySince(pod *v1.Pod) time.Time { return podstate.ReadyTime(pod).Time }

// Pods is a whole childset Kind for pods, for a host that lists them
// itself (ctrlruntime/childsetcr): ready by PodReadiness, updated in place
// by InPlace under an in-place childset.UpdateStrategy.
type Pods struct {
	PodReadiness
	InPlace
}
