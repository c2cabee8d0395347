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
// (childset.Kind), 55 lines without comments and blank lines (a test
// recounts them), of which the pre-delete gate is 5. Expectations, adoption of matching orphans and release
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
// With rolling updates, spec.strategy.type chooses how a Worker moves to a
// changed template: Recreate (the default) replaces it; InPlaceIfPossible
// merge-patches its spec.image when nothing else changed, and replaces it
// otherwise; InPlaceOnly patches it or leaves it at its revision, with a
// Warning event (InPlaceUpdateRefused). A Worker updated in place counts
// as unavailable, within maxUnavailable, until its agent reports the new
// image in status.image (an agent that reports none is taken at its word).
// That is inplace.go, 33 lines without comments and blank lines for
// in-place updates (a test recounts them).
//
// With rolling updates the controller also needs, in RBAC terms, list,
// watch, create, update, patch and delete on controllerrevisions (apps)
// and patch on workersets/status.
//
// spec.lifecycle.preDelete (label, timeoutSeconds) is a pre-delete gate
// (Set.DeletionGate, a childset.DeletionGateSpec): each Worker the
// WorkerSet would delete, for a scale-in or a replacement, is marked with
// the label, set to "pending", and deleted only once whatever drains it
// changes or removes the label, or the timeout passes (ten minutes when
// absent or 0), with a Warning event (DeletionGateTimeout). The label must
// be a valid label key, or marking fails.
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
