package podstate

import v1 "k8s.io/api/core/v1"

// MaxContainerRestarts returns the highest restart count among the pod's
// regular containers and, separately, among its sidecars. A sidecar is a
// restartable init container: its status is matched by name against
// spec.initContainers entries whose restartPolicy is Always. Ordinary init
// containers and ephemeral containers are ignored. Counts below zero read as
// zero, and a nil pod yields (0, 0).
func MaxContainerRestarts(pod *v1.Pod) (regular, sidecar int32) {
	if pod == nil {
		return 0, 0
	}
	for i := range pod.Status.ContainerStatuses {
		regular = max(regular, pod.Status.ContainerStatuses[i].RestartCount)
	}
	for i := range pod.Status.InitContainerStatuses {
		s := &pod.Status.InitContainerStatuses[i]
		if s.RestartCount > sidecar && isSidecar(pod.Spec.InitContainers, s.Name) {
			sidecar = s.RestartCount
		}
	}
	return regular, sidecar
}

// isSidecar scans instead of building a name set: pods have a handful of init
// containers, and this runs once per pod per ranking, so an allocation would
// cost more than the scan.
func isSidecar(inits []v1.Container, name string) bool {
	for i := range inits {
		c := &inits[i]
		// The pointer test first: it is cheaper than the name comparison and
		// rules out ordinary init containers, which have no restart policy.
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways && c.Name == name {
			return true
		}
	}
	return false
}
