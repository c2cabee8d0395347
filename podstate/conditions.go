package podstate

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GetPodCondition returns the index and address of the first condition of
// type conditionType in status, or -1 and nil (also for a nil status).
func GetPodCondition(status *v1.PodStatus, conditionType v1.PodConditionType) (int, *v1.PodCondition) {
	if status == nil {
		return -1, nil
	}
	return GetPodConditionFromList(status.Conditions, conditionType)
}

// GetPodConditionFromList returns the index and address of the first
// condition of type conditionType in conditions, or -1 and nil.
func GetPodConditionFromList(conditions []v1.PodCondition, conditionType v1.PodConditionType) (int, *v1.PodCondition) {
	for i := range conditions {
		if conditions[i].Type == conditionType {
			return i, &conditions[i]
		}
	}
	return -1, nil
}

// IsPodReadyConditionTrue reports whether the first Ready condition of
// status is True.
func IsPodReadyConditionTrue(status v1.PodStatus) bool {
	c := readyCondition(&status)
	return c != nil && c.Status == v1.ConditionTrue
}

// UpdatePodCondition sets condition in status, replacing the first condition
// of its type or appending it, and reports whether anything changed. The
// condition's LastTransitionTime becomes now when its status changes (or it
// is new) and keeps the old value otherwise; condition itself is updated to
// what was stored, as upstream does. A nil status or condition panics, as a
// programmer error.
func UpdatePodCondition(status *v1.PodStatus, condition *v1.PodCondition) bool {
	return UpdatePodConditionAt(status, condition, metav1.Now())
}

// UpdatePodConditionAt is UpdatePodCondition with the transition time given,
// for callers with an injected clock.
func UpdatePodConditionAt(status *v1.PodStatus, condition *v1.PodCondition, now metav1.Time) bool {
	if status == nil || condition == nil {
		panic("podstate: UpdatePodCondition: nil status or condition")
	}
	condition.LastTransitionTime = now
	i, old := GetPodCondition(status, condition.Type)
	if old == nil {
		status.Conditions = append(status.Conditions, *condition)
		return true
	}
	if condition.Status == old.Status {
		condition.LastTransitionTime = old.LastTransitionTime
	}
	unchanged := condition.Status == old.Status &&
		condition.Reason == old.Reason &&
		condition.Message == old.Message &&
		condition.LastProbeTime.Equal(&old.LastProbeTime) &&
		condition.LastTransitionTime.Equal(&old.LastTransitionTime)
	status.Conditions[i] = *condition
	return !unchanged
}

// GetContainerStatus returns the status of the container called name in
// statuses and whether there is one.
func GetContainerStatus(statuses []v1.ContainerStatus, name string) (v1.ContainerStatus, bool) {
	for i := range statuses {
		if statuses[i].Name == name {
			return statuses[i], true
		}
	}
	return v1.ContainerStatus{}, false
}

// GetExistingContainerStatus returns the status of the container called name
// in statuses, or the zero status when there is none.
func GetExistingContainerStatus(statuses []v1.ContainerStatus, name string) v1.ContainerStatus {
	s, _ := GetContainerStatus(statuses, name)
	return s
}
