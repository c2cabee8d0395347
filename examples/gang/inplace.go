package gang

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/podset"
)

// This file is the code a user adds to rolling.go for in-place updates:
// RollingGangs' UpdateStrategy (childset.UpdateStrategySpec) and Pods'
// InPlaceUpdate and InPlaceDone (childset.InPlaceKind), which are
// podset.InPlace's. doc.go states its size.
//
// A pod keeps its name and index when updated in place, so an in-place
// rollout never waits for an index to be freed, as a replacement does.

// UpdateStrategy reads spec.strategy.type; absent or unknown is Recreate.
func (RollingGangs) UpdateStrategy(gang *unstructured.Unstructured) childset.UpdateStrategy {
	s, _, _ := unstructured.NestedString(gang.Object, "spec", "strategy", "type")
	return childset.UpdateStrategy(s)
}

// InPlaceUpdate patches images, labels and annotations, and resizes CPU
// and memory, when nothing else of the pod template changed.
func (Pods) InPlaceUpdate(from, to *v1.Pod) ([]childset.InPlacePatch, bool) {
	return podset.InPlace{}.InPlaceUpdate(from, to)
}

// InPlaceDone reports whether the pod's containers run, ready, at their
// spec's images, with no resize pending.
func (Pods) InPlaceDone(pod *v1.Pod) bool { return podset.InPlace{}.InPlaceDone(pod) }
