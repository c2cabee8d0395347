package podstate

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReadyCondition returns the first condition of type Ready in status, or nil.
// Only the first one counts, as upstream: a later duplicate is ignored even if
// it disagrees. The pointer aliases status.Conditions.
func ReadyCondition(status v1.PodStatus) *v1.PodCondition {
	return readyCondition(&status)
}

// readyCondition avoids copying the status, which ReadyCondition's by-value
// signature (kept for upstream compatibility) would otherwise force on every
// hot-path caller inside this package.
func readyCondition(status *v1.PodStatus) *v1.PodCondition {
	for i := range status.Conditions {
		if status.Conditions[i].Type == v1.PodReady {
			return &status.Conditions[i]
		}
	}
	return nil
}

// IsReady reports whether the pod's first Ready condition is True. Phase and
// deletion timestamp are not considered. A nil pod is not ready.
func IsReady(pod *v1.Pod) bool {
	if pod == nil {
		return false
	}
	c := readyCondition(&pod.Status)
	return c != nil && c.Status == v1.ConditionTrue
}

// ReadyTime returns when the pod last became ready: the transition time of
// its first Ready condition when that condition is True, otherwise the zero
// time. A nil pod yields the zero time.
func ReadyTime(pod *v1.Pod) metav1.Time {
	if pod == nil {
		return metav1.Time{}
	}
	c := readyCondition(&pod.Status)
	if c == nil || c.Status != v1.ConditionTrue {
		return metav1.Time{}
	}
	return c.LastTransitionTime
}

// IsAvailable reports whether the pod has been ready for at least
// minReadySeconds at now. The boundary is inclusive (ready-since +
// minReadySeconds <= now), as in upstream since v1.34. With minReadySeconds ==
// 0 any ready pod is available; with minReadySeconds > 0 a ready pod whose
// transition time is zero is not, because nothing proves how long it has been
// ready. A nil pod is not available.
func IsAvailable(pod *v1.Pod, minReadySeconds int32, now time.Time) bool {
	if pod == nil {
		return false
	}
	c := readyCondition(&pod.Status)
	if c == nil || c.Status != v1.ConditionTrue {
		return false
	}
	if minReadySeconds == 0 {
		return true
	}
	if c.LastTransitionTime.IsZero() {
		return false
	}
	since := c.LastTransitionTime.Add(time.Duration(minReadySeconds) * time.Second)
	return !since.After(now)
}
