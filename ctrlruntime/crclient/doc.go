// Package crclient lets ctrlkit's writers run over a controller-runtime
// client.Client, so the pieces built around them (scale-down ranking, slow
// start, the controller-ref manager) work in a controller-runtime
// controller without a clientset.
//
// Writer is the narrow writer (create, delete, patch) over client.Client;
// everything else comes from podcontrol and objectcontrol, which wrap it.
// PodControl is podcontrol's pod control over that writer: the same pod
// built from the template, the same checks, events and options
// (podcontrol.WithEventReasons, WithNotFoundAsSuccess, WithWriteTimeout),
// and CreatePodWithName. NewObjectControl does the same for
// any other kind. Patcher is a claim.Patcher (with claim.PatchTyper) for
// objects of any kind, so claim's ref managers can adopt and release
// through the manager's client:
//
//	pc := crclient.NewPodControl(mgr.GetClient(), mgr.GetEventRecorderFor("podgroup-controller"))
//	m := claim.NewPodControllerRefManager(pc, group, selector, groupGVK, canAdopt)
//	pods, err := m.ClaimPods(ctx, cachedPods)
//	err = slowstart.Batch(ctx, diff, slowstart.InitialBatchSize, func(ctx context.Context) error {
//		return pc.CreatePods(ctx, group.Namespace, template, group, ref)
//	})
package crclient
