package podset

import (
	"encoding/json"
	"maps"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/history"
)

// InPlace is the in-place half of a childset Kind for pods
// (childset.InPlaceKind), for a set of pods that rolls out under an
// in-place childset.UpdateStrategy: embed it beside PodReadiness.
//
// Between two revisions' pods, container images and the pod's labels and
// annotations change through a patch of the pod; CPU and memory requests
// and limits through its resize subresource (GA in Kubernetes 1.35), as
// long as the pod's QoS class stays the same. Any other difference, init
// containers and ephemeral storage included, cannot be made in place.
type InPlace struct{}

var _ childset.InPlaceKind[*v1.Pod] = InPlace{}

// InPlaceUpdate returns the resize of the containers whose resources
// changed, then the patch of images, labels and annotations.
func (InPlace) InPlaceUpdate(from, to *v1.Pod) ([]childset.InPlacePatch, bool) {
	if len(from.Spec.Containers) != len(to.Spec.Containers) || qosClass(from) != qosClass(to) {
		return nil, false
	}
	// Only the images and the resources may differ: what remains of the
	// old spec with the new ones put in must be the new spec.
	rest := from.Spec.DeepCopy()
	var images, resources []map[string]any
	for i := range to.Spec.Containers {
		old, cur := &rest.Containers[i], &to.Spec.Containers[i]
		if old.Name != cur.Name || !onlyCPUAndMemory(old.Resources, cur.Resources) {
			return nil, false
		}
		if old.Image != cur.Image {
			images = append(images, map[string]any{"name": cur.Name, "image": cur.Image})
			old.Image = cur.Image
		}
		if !equality.Semantic.DeepEqual(old.Resources, cur.Resources) {
			resources = append(resources, map[string]any{"name": cur.Name, "resources": cur.Resources})
			old.Resources = cur.Resources
		}
	}
	if !equality.Semantic.DeepEqual(rest, &to.Spec) {
		return nil, false
	}
	var patches []childset.InPlacePatch
	if len(resources) > 0 {
		patches = append(patches, strategicPatch("resize", map[string]any{"spec": map[string]any{"containers": resources}}))
	}
	metadata := map[string]any{}
	if diff := mapDiff(from.Labels, to.Labels, history.ControllerRevisionHashLabel); len(diff) > 0 {
		metadata["labels"] = diff
	}
	if diff := mapDiff(from.Annotations, to.Annotations, ""); len(diff) > 0 {
		metadata["annotations"] = diff
	}
	if len(images) > 0 || len(metadata) > 0 {
		body := map[string]any{}
		if len(images) > 0 {
			body["spec"] = map[string]any{"containers": images}
		}
		if len(metadata) > 0 {
			body["metadata"] = metadata
		}
		patches = append(patches, strategicPatch("", body))
	}
	return patches, true
}

// InPlaceDone reports whether every container of pod runs its spec's
// image, running and ready, with no resize pending or in progress. A pod
// whose containers report nothing yet (no kubelet has run it) is judged by
// its Ready condition alone: nothing says it runs anything else.
func (InPlace) InPlaceDone(pod *v1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if (c.Type == v1.PodResizePending || c.Type == v1.PodResizeInProgress) && c.Status == v1.ConditionTrue {
			return false
		}
	}
	if len(pod.Status.ContainerStatuses) == 0 {
		return true
	}
	for _, c := range pod.Spec.Containers {
		i := -1
		for j := range pod.Status.ContainerStatuses {
			if pod.Status.ContainerStatuses[j].Name == c.Name {
				i = j
				break
			}
		}
		if i < 0 {
			return false
		}
		st := pod.Status.ContainerStatuses[i]
		if !st.Ready || st.State.Running == nil || normalImage(st.Image) != normalImage(c.Image) {
			return false
		}
	}
	return true
}

// onlyCPUAndMemory reports whether two containers' resources differ, if at
// all, only in CPU and memory, the resources a resize changes.
func onlyCPUAndMemory(a, b v1.ResourceRequirements) bool {
	strip := func(r v1.ResourceRequirements) v1.ResourceRequirements {
		r = *r.DeepCopy()
		for _, list := range []v1.ResourceList{r.Requests, r.Limits} {
			delete(list, v1.ResourceCPU)
			delete(list, v1.ResourceMemory)
		}
		return r
	}
	return equality.Semantic.DeepEqual(strip(a), strip(b))
}

// qosClass is the pod's QoS class by its containers' CPU and memory, as
// the API server computes it; a resize may not change it.
func qosClass(pod *v1.Pod) v1.PodQOSClass {
	some, guaranteed := false, true
	for _, c := range pod.Spec.Containers {
		for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
			req, hasReq := c.Resources.Requests[name]
			limit, hasLimit := c.Resources.Limits[name]
			some = some || hasReq || hasLimit
			if !hasLimit || (hasReq && req.Cmp(limit) != 0) {
				guaranteed = false
			}
		}
	}
	switch {
	case !some:
		return v1.PodQOSBestEffort
	case guaranteed:
		return v1.PodQOSGuaranteed
	}
	return v1.PodQOSBurstable
}

// normalImage is an image reference as the kubelet reports it: Docker
// Hub's default registry and library path dropped, and the latest tag
// added when there is neither a tag nor a digest.
func normalImage(image string) string {
	image = strings.TrimPrefix(strings.TrimPrefix(image, "docker.io/"), "library/")
	if strings.Contains(image, "@") {
		return image
	}
	if i := strings.LastIndex(image, ":"); i < 0 || strings.Contains(image[i:], "/") {
		image += ":latest"
	}
	return image
}

// mapDiff is the merge patch that turns from into to: the keys to set and
// the keys to remove (nil), skip excepted.
func mapDiff(from, to map[string]string, skip string) map[string]any {
	out := map[string]any{}
	for k, v := range to {
		if k != skip && from[k] != v {
			out[k] = v
		}
	}
	for k := range maps.Keys(from) {
		if _, kept := to[k]; !kept && k != skip {
			out[k] = nil
		}
	}
	return out
}

func strategicPatch(subresource string, body map[string]any) childset.InPlacePatch {
	// A map of strings, lists and resource quantities always encodes.
	data, _ := json.Marshal(body)
	return childset.InPlacePatch{Subresource: subresource, Type: types.StrategicMergePatchType, Data: data}
}
