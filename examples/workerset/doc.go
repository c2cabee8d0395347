// Package workerset is childset's example of a custom resource owning
// custom resources, the MachineSet or VM-pool shape: a WorkerSet
// (examples.ctrlkit.io/v1alpha1; spec.replicas, spec.selector,
// spec.template with metadata.labels and spec) keeps spec.replicas Workers,
// interchangeable and with generated names. A Worker is ready when
// status.ready is true; not-ready Workers are deleted first.
//
// Both kinds are *unstructured.Unstructured on the dynamic client: no
// generated Go types. crd.yaml (embedded as CRD) defines them.
//
// The user code is adapter.go: Set (childset.Spec) and Workers
// (childset.Kind), 50 lines without comments and blank lines (a test
// recounts them). Expectations, adoption of matching orphans and release
// of children that stop matching, slow-start creates, the deletion order
// and the worker loop are childset's; the writes go through
// objectcontrol.DynamicWriter. spec.replicas absent or null means 1, as
// for a ReplicaSet; a negative, fractional or non-numeric value is refused
// with a Warning event (TemplateInvalid) and nothing is written.
//
// Rolling updates come with WithRollingUpdates (a clientset and a
// ControllerRevision informer, for the revisions): the controller then
// runs RollingSet, in rolling.go, 18 more lines without comments and blank
// lines (a test recounts them), the field layout being
// childset.DeploymentLayout's. A change of spec.template is rolled out as
// a Deployment rolls pods, within spec.strategy.rollingUpdate's maxSurge
// and maxUnavailable (a number or a percentage; 25% each when absent) and
// above its partition (that many Workers stay at the old template); each
// template is a ControllerRevision, of which spec.revisionHistoryLimit
// (10 when absent) unused ones are kept, and a rollback reuses its old
// revision. A Worker is available once ready for spec.minReadySeconds,
// from its status.readySince (RFC 3339). The status (replicas,
// readyReplicas, availableReplicas, updatedReplicas, currentRevision,
// updateRevision, collisionCount, observedGeneration) is merge-patched
// through the status subresource when it changes. Malformed rollout fields
// are refused like a malformed spec.replicas.
//
// With rolling updates the controller also needs, in RBAC terms, list,
// watch, create, update, patch and delete on controllerrevisions (apps)
// and patch on workersets/status.
//
// Use it as
//
//	factory := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
//	c, err := workerset.NewController(ctx, dyn, factory, workerset.WithEventRecorder(recorder))
//	factory.Start(ctx.Done())
//	err = c.Run(ctx)
//
// and, for rolling updates,
//
//	typed := informers.NewSharedInformerFactory(client, 0)
//	c, err := workerset.NewController(ctx, dyn, factory,
//		workerset.WithRollingUpdates(client, typed.Apps().V1().ControllerRevisions()))
//	factory.Start(ctx.Done())
//	typed.Start(ctx.Done())
//	err = c.Run(ctx)
package workerset
