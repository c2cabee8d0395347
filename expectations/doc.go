// Package expectations is a TTL cache of the creations and deletions a
// controller has asked the API server for but has not yet observed through its
// informers. A controller consults it before syncing an owner, so that it never
// acts twice on the same stale cache.
//
// It replaces ControllerExpectations and UIDTrackingControllerExpectations from
// k8s.io/kubernetes/pkg/controller.
package expectations
