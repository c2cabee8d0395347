// Package podcontrol is how controllers write the pods they own: PodControl,
// a real implementation over a narrow PodWriter that records events, and a
// fake for tests.
//
// PodControl keeps upstream's interface (CreatePods, CreatePodsWithGenerateName,
// DeletePod, PatchPod), event reasons and messages, and the checks upstream
// makes before a create: a valid controller reference and a template with
// labels. RealPodControl adds CreatePodWithName for controllers that name
// their pods (NamedPodCreator) and, through options, its own event reasons
// (WithEventReasons), a delete that treats NotFound as success
// (WithNotFoundAsSuccess; by default NotFound is returned, as upstream) and
// a deadline on every write (WithWriteTimeout).
//
// RealPodControl builds the pod and leaves the write to an
// objectcontrol.Control over a PodWriter: ClientsetWriter for client-go
// (NewRealPodControl), or ctrlruntime/crclient's writer for a
// controller-runtime client. Objects of other kinds are written through
// package objectcontrol; the names they had here are deprecated aliases.
//
//	pods := podcontrol.NewRealPodControl(client, recorder)
//	err := pods.CreatePods(ctx, rs.Namespace, &rs.Spec.Template, rs, metav1.NewControllerRef(rs, kind))
package podcontrol
