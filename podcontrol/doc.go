// Package podcontrol is how controllers write the objects they own: pods
// through PodControl, other kinds through ObjectControl, each with a client-go
// implementation that records events and a fake for tests.
//
// PodControl keeps upstream's interface (CreatePods, CreatePodsWithGenerateName,
// DeletePod, PatchPod), event reasons and messages, and the checks upstream
// makes before a create: a valid controller reference and a template with
// labels. RealPodControl adds CreatePodWithName for controllers that name
// their pods (NamedPodCreator) and, through options, its own event reasons
// (WithEventReasons), a delete that treats NotFound as success
// (WithNotFoundAsSuccess; by default NotFound is returned, as upstream) and a
// hook on every write (WithOnWrite).
//
// ObjectControl does the same for any kind with a client-go typed client
// (Services, PersistentVolumeClaims, custom resources with generated
// clients): create with a controller reference, delete and patch, with
// events. Its Patch and PatchType methods make it a patcher for the generic
// ref manager in package claim.
//
//	pods := podcontrol.NewRealPodControl(client, recorder)
//	err := pods.CreatePods(ctx, rs.Namespace, &rs.Spec.Template, rs, metav1.NewControllerRef(rs, kind))
package podcontrol
