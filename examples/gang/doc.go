// Package gang is childset's example of indexed children: a Gang
// (examples.ctrlkit.io/v1alpha1; spec.replicas, spec.template, a pod
// template) keeps pods named <gang>-0 ... <gang>-(replicas-1), as a
// distributed training job or an MPI world needs fixed ranks. The lowest
// missing index is created first and the highest deleted first; a pod of
// that name that the Gang does not control is never duplicated: the Gang
// gets a Warning event (NameConflict) and retries later.
//
// The Gang is *unstructured.Unstructured from a dynamic informer (no
// generated Go type; crd.yaml, embedded as CRD, defines it); the pods are
// typed *v1.Pod, written through objectcontrol.TypedWriter over the
// clientset. The pods are selected by Label=<gang name>, which the
// controller adds; an orphan pod carrying it is adopted.
//
// The user code is adapter.go: Gangs (childset.Spec) and Pods
// (childset.Kind), 57 lines without comments and blank lines (a test
// recounts them), of which the pre-delete gate is 5. spec.replicas absent or null means 1; a negative,
// fractional or non-numeric value, or a missing template, is refused with
// a Warning event (TemplateInvalid) and nothing is written.
//
// Rolling updates come with WithRollingUpdates (a dynamic client for the
// status and a ControllerRevision informer, for the revisions): the
// controller then runs RollingGangs, in rolling.go,
// 14 more lines without comments and blank lines (a test recounts them),
// the field layout being childset.DeploymentLayout's.
// A change of spec.template replaces the pods in place of their index,
// highest first, within spec.strategy.rollingUpdate's maxSurge and
// maxUnavailable (a number or a percentage; 25% each when absent): a new
// pod of an index is created only once its predecessor is gone, so no two
// pods ever hold one index, and maxUnavailable counts as at least 1 (as
// for a StatefulSet), or no index could ever be replaced; maxSurge adds
// no pods. Indices below the partition stay at the old template. Each
// template is a ControllerRevision, of which spec.revisionHistoryLimit (10
// when absent) unused ones are kept, and a rollback reuses its old
// revision. A pod is available once Ready for spec.minReadySeconds. The
// status (replicas, readyReplicas, availableReplicas, updatedReplicas,
// currentRevision, updateRevision, collisionCount, observedGeneration) is
// merge-patched through the status subresource when it changes. Malformed
// rollout fields are refused like a malformed spec.replicas.
//
// With rolling updates, spec.strategy.type chooses how a pod moves to a
// changed template: Recreate (the default) replaces it at its index;
// InPlaceIfPossible updates it where it stands, keeping its name and UID,
// when podset.InPlace can (images, labels and annotations patched, CPU
// and memory resized), and replaces it otherwise; InPlaceOnly updates it
// in place or leaves it at its revision, with a Warning event
// (InPlaceUpdateRefused). A pod updated in place counts as unavailable,
// within maxUnavailable, until its containers run the new images, ready.
// That is inplace.go, 8 lines without comments and blank lines for
// in-place updates (a test recounts them).
//
// With rolling updates the controller also needs, in RBAC terms, list,
// watch, create, update, patch and delete on controllerrevisions (apps)
// and patch on gangs/status.
//
// spec.lifecycle.preDelete (label, timeoutSeconds) is a pre-delete gate
// (Gangs.DeletionGate, a childset.DeletionGateSpec): each pod the Gang
// would delete, for a scale-in or a replacement, is marked with the label,
// set to "pending", and deleted only once whatever hands its work over
// changes or removes the label, or the timeout passes (ten minutes when
// absent or 0), with a Warning event (DeletionGateTimeout); its index
// stays held meanwhile. The label must be a valid label key, or marking
// fails.
//
// Use it as
//
//	pods := informers.NewSharedInformerFactory(client, 0)
//	gangs := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
//	c, err := gang.NewController(ctx, client, pods.Core().V1().Pods(), gangs, gang.WithEventRecorder(recorder))
//	pods.Start(ctx.Done())
//	gangs.Start(ctx.Done())
//	err = c.Run(ctx)
//
// and, for rolling updates, pass
// gang.WithRollingUpdates(dyn, pods.Apps().V1().ControllerRevisions())
// (pods being the clientset's informer factory, which then holds the
// revisions too) and wait for its caches before Run.
package gang
