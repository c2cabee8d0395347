// Package claim is the controller-ref manager: it adopts orphans that match a
// controller's selector, releases owned objects that no longer match, and
// leaves objects owned by other controllers alone.
//
// It replaces the ControllerRefManager family and PodControl from
// k8s.io/kubernetes/pkg/controller.
package claim
