package workerset

import (
	"encoding/json"
	"maps"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/childset"
)

// A Worker moves to another image in place: spec.image is patched, and
// the Worker is unavailable until its agent reports the image running
// (status.image; an agent that reports none is taken at its word at once).
// Any other change of the template recreates it, or under InPlaceOnly
// leaves it. In-place support costs a kind these two methods.

// InPlaceUpdate patches spec.image when only the image changed.
func (WorkerAdapter) InPlaceUpdate(from, to *Worker) ([]childset.InPlacePatch, bool) {
	if from.Spec.MachineClass != to.Spec.MachineClass || !maps.Equal(from.Labels, to.Labels) || !maps.Equal(from.Annotations, to.Annotations) {
		return nil, false
	}
	patch, err := json.Marshal(map[string]any{"spec": map[string]string{"image": to.Spec.Image}})
	return []childset.InPlacePatch{{Type: types.MergePatchType, Data: patch}}, err == nil
}

// InPlaceDone reports whether the agent runs the Worker's image.
func (WorkerAdapter) InPlaceDone(w *Worker) bool {
	return w.Status.Image == "" || w.Status.Image == w.Spec.Image
}
