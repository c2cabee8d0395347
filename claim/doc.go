// Package claim is the controller-ref manager: it adopts orphans that match a
// controller's selector, releases owned objects that no longer match, and
// leaves objects owned by other controllers alone. It also provides
// PodControl, the way controllers create, delete and patch pods, with a
// client-go implementation that records events and a fake for tests.
//
// It replaces the ControllerRefManager family and PodControl from
// k8s.io/kubernetes/pkg/controller, with the same decision table, patch
// bodies (byte for byte) and event reasons. Loggers come from the context.
//
// One generic core, ObjectControllerRefManager[T], serves every kind;
// PodControllerRefManager and ReplicaSetControllerRefManager are thin
// wrappers keeping upstream's method names. It writes through a Patcher, so
// typed clients, the dynamic client (DynamicPatcher) and fakes all fit.
//
// Differences from upstream:
//   - Any kind can be claimed (upstream has one hand-written manager per
//     kind), including custom resources through the dynamic client with JSON
//     merge patches guarded by resourceVersion, since custom resources refuse
//     strategic-merge patches.
//   - A nil Selector matches nothing (like labels.Nothing()) instead of
//     panicking; a nil controller, nil object, nil PodControl or nil client is
//     reported as an error (ErrNilController, ErrNilObject, ErrNoPatcher)
//     instead of panicking. A controller or object without a UID is handled
//     as upstream does (an empty UID is compared and sent like any other).
//   - Errors are wrapped with %w, so errors.Is sees a CanAdopt failure or an
//     API error through the messages upstream formats with %v.
//   - GetPodFromTemplate deep-copies the controller reference too (upstream
//     shares its Controller and BlockOwnerDeletion pointers).
//   - FakePodControl validates its input like RealPodControl, never mutates
//     the caller's template (upstream's fake writes GenerateName into it), and
//     records namespaces and per-operation errors.
//   - RealPodControl tolerates a nil event recorder.
//
// Claim and ClaimPods read the controller's UID, namespace and deletion
// state once per call rather than once per object, call the selector only
// for objects whose outcome depends on it, and allocate their result once at
// its final size; the decisions are those of ClaimObject, object by object.
package claim
