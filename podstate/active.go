package podstate

import v1 "k8s.io/api/core/v1"

// IsActive reports whether a pod still counts towards a controller's
// replicas: it has not reached a terminal phase (Succeeded or Failed) and
// deletion has not started. An empty, Pending, Unknown or Running phase is
// active. A nil pod is not active.
func IsActive(pod *v1.Pod) bool {
	if pod == nil {
		return false
	}
	return !IsPodPhaseTerminal(pod.Status.Phase) && pod.DeletionTimestamp == nil
}

// IsTerminating reports whether a pod is being deleted but has not yet
// reached a terminal phase, so it still holds resources. A nil pod is not
// terminating.
func IsTerminating(pod *v1.Pod) bool {
	if pod == nil {
		return false
	}
	return !IsPodPhaseTerminal(pod.Status.Phase) && pod.DeletionTimestamp != nil
}

// IsPodPhaseTerminal reports whether phase is one a pod never leaves:
// Succeeded or Failed (upstream's pkg/api/v1/pod.IsPodPhaseTerminal). Every
// other phase, the empty one included, may still change.
func IsPodPhaseTerminal(phase v1.PodPhase) bool {
	return phase == v1.PodSucceeded || phase == v1.PodFailed
}

// FilterActive returns the active pods in their input order. Like upstream it
// returns nil, not an empty slice, when no pod is active; nil entries are
// dropped.
func FilterActive(pods []*v1.Pod) []*v1.Pod {
	return filter(pods, IsActive)
}

// FilterTerminating returns the terminating pods in their input order, or nil
// when there are none; nil entries are dropped.
func FilterTerminating(pods []*v1.Pod) []*v1.Pod {
	return filter(pods, IsTerminating)
}

// filter counts first so the result is allocated once at its final size: the
// callers run it on every sync over every pod of a workload.
func filter(pods []*v1.Pod, keep func(*v1.Pod) bool) []*v1.Pod {
	n := 0
	for _, p := range pods {
		if keep(p) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]*v1.Pod, 0, n)
	for _, p := range pods {
		if keep(p) {
			out = append(out, p)
		}
	}
	return out
}
