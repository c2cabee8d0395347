// Package podranking decides which pods a controller deletes first when it
// scales down: ActivePodsWithRanks, pod deletion cost and logarithmic
// scale-down, as in k8s.io/kubernetes/pkg/controller.
package podranking
