package podset

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/podranking"
)

// TrimPod is a pod informer transform (a cache.TransformFunc) that keeps only
// the pod fields a podset controller reads, so that an informer over many
// pods holds a fraction of each. Set it before the informer starts:
//
//	podInformer.Informer().SetTransform(podset.TrimPod)
//
// Only do so on a pod informer whose every reader is a podset controller (or
// reads no more than these fields): the other fields are gone from the cache.
//
// Kept, and who reads them:
//
//   - metadata name, namespace, uid and resourceVersion: cache keys,
//     expectations, patches' preconditions, the read-your-writes guard and
//     the update handler's resync check;
//   - metadata labels, ownerReferences and finalizers: claiming (a JSON merge
//     patch rewrites the whole ownerReferences and finalizers lists, so both
//     are kept whole), the controller index and the event handlers;
//   - metadata creationTimestamp and deletionTimestamp: phase (a pod being
//     deleted is not active) and the scale-down ranking;
//   - the pod-deletion-cost annotation, and no other annotation: ranking;
//   - spec.nodeName: ranking (unassigned first, pods on crowded nodes first);
//   - status.phase: active or not, and ranking;
//   - the first Ready condition's type, status and lastTransitionTime, and no
//     other condition: readiness, availability after minReadySeconds, and
//     ranking;
//   - restarts, for ranking: only the highest restart count of the regular
//     containers and the highest of the sidecars (init containers that restart
//     always) matter, so each is kept, when above zero, as one container
//     status carrying it (and, for sidecars, one init container with its name
//     and restart policy).
//
// Everything else (containers and volumes, managedFields, other annotations
// and conditions, IPs, images, QoS class) is dropped. TestTrimPodKeepsDecisions
// (in the e2e module) checks that neither this controller nor upstream's
// decides differently on trimmed pods, and the controller's own tests run on
// trimmed pods as well as on whole ones.
//
// The pod is rebuilt from the kept fields rather than cleared field by field,
// so that a field added to the Pod type later is dropped too; the input is
// not modified. TrimPod is idempotent, as informer transforms should be.
// Anything other than a *v1.Pod (such as a cache.DeletedFinalStateUnknown
// tombstone, whose pod comes from the cache and is trimmed already) is
// returned unchanged.
func TrimPod(obj any) (any, error) {
	pod, ok := obj.(*v1.Pod)
	if !ok || pod == nil {
		return obj, nil
	}
	out := &v1.Pod{
		TypeMeta: pod.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, ResourceVersion: pod.ResourceVersion,
			Labels: pod.Labels, OwnerReferences: pod.OwnerReferences, Finalizers: pod.Finalizers,
			CreationTimestamp: pod.CreationTimestamp, DeletionTimestamp: pod.DeletionTimestamp,
		},
		Spec:   v1.PodSpec{NodeName: pod.Spec.NodeName},
		Status: v1.PodStatus{Phase: pod.Status.Phase},
	}
	if cost, ok := pod.Annotations[podranking.DeletionCostAnnotation]; ok {
		out.Annotations = map[string]string{podranking.DeletionCostAnnotation: cost}
	}
	for i := range pod.Status.Conditions {
		if c := &pod.Status.Conditions[i]; c.Type == v1.PodReady {
			out.Status.Conditions = []v1.PodCondition{{Type: c.Type, Status: c.Status, LastTransitionTime: c.LastTransitionTime}}
			break
		}
	}
	if s, ok := mostRestarted(pod.Status.ContainerStatuses, func(string) bool { return true }); ok {
		out.Status.ContainerStatuses = []v1.ContainerStatus{s}
	}
	isSidecar := func(name string) bool { return restartsAlways(pod.Spec.InitContainers, name) }
	if s, ok := mostRestarted(pod.Status.InitContainerStatuses, isSidecar); ok {
		out.Status.InitContainerStatuses = []v1.ContainerStatus{s}
		out.Spec.InitContainers = []v1.Container{{Name: s.Name, RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways)}}
	}
	return out, nil
}

var _ cache.TransformFunc = TrimPod

// mostRestarted returns the name and restart count of the status with the
// most restarts, when that is above zero: a status with no restarts ranks
// the same as no status at all. Only the statuses whose name counts are
// considered.
func mostRestarted(statuses []v1.ContainerStatus, counts func(name string) bool) (v1.ContainerStatus, bool) {
	var best v1.ContainerStatus
	for i := range statuses {
		s := &statuses[i]
		if s.RestartCount <= best.RestartCount {
			continue
		}
		if !counts(s.Name) {
			continue
		}
		best = v1.ContainerStatus{Name: s.Name, RestartCount: s.RestartCount}
	}
	return best, best.RestartCount > 0
}

// restartsAlways reports whether the init container named name is a sidecar.
func restartsAlways(inits []v1.Container, name string) bool {
	for i := range inits {
		if c := &inits[i]; c.Name == name && c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			return true
		}
	}
	return false
}
