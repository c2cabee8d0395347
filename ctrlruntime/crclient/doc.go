// Package crclient lets ctrlkit's writers run over a controller-runtime
// client.Client, so the pieces built around them (scale-down ranking, slow
// start, the controller-ref manager) work in a controller-runtime
// controller without a clientset.
//
// PodControl is a podcontrol.PodControl over client.Client: the same pod
// built from the template, the same validation and the same events as
// podcontrol.RealPodControl. Patcher is a claim.Patcher (with
// claim.PatchTyper) for objects of any kind, so claim's ref managers can
// adopt and release through the manager's client:
//
//	pc := crclient.NewPodControl(mgr.GetClient(), mgr.GetEventRecorderFor("podgroup-controller"))
//	m := claim.NewPodControllerRefManager(pc, group, selector, groupGVK, canAdopt)
//	pods, err := m.ClaimPods(ctx, cachedPods)
//	err = slowstart.Batch(ctx, diff, slowstart.InitialBatchSize, func(ctx context.Context) error {
//		return pc.CreatePods(ctx, group.Namespace, template, group, ref)
//	})
package crclient
