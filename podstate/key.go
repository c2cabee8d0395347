package podstate

import v1 "k8s.io/api/core/v1"

// Key returns "namespace/name", the key expectations and work queues use for
// a pod. A nil pod yields the empty string.
func Key(pod *v1.Pod) string {
	if pod == nil {
		return ""
	}
	return pod.Namespace + "/" + pod.Name
}
