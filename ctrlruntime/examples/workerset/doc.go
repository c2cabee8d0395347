// Package workerset is a complete controller-runtime controller for a
// custom resource that keeps N custom resources: a WorkerSet owns Workers,
// the MachineSet or VM-pool shape, through childsetcr and childset's
// interchangeable mode (Workers get generated names; a scale-down deletes
// the Workers that are not ready first).
//
// With spec.strategy.rollingUpdate (maxSurge, maxUnavailable, partition), a
// changed template rolls the Workers out as a Deployment rolls its pods:
// each template is a ControllerRevision, new Workers are surged and old
// ones removed within the bounds, a Worker counting as available once it
// has been ready for spec.minReadySeconds (status.readySince), and a
// rollback reuses the earlier revision. spec.paused holds the rollout (the
// WorkerSet still scales), and spec.progressDeadlineSeconds adds a
// Progressing condition to the status, as a Deployment's. The status
// subresource reports the counts and revisions (updatedReplicas,
// currentRevision, updateRevision, collisionCount, ...). Without a
// strategy, Workers of an older template stay as they are. RBAC: WorkerSets and their status, Workers, and
// apps/controllerrevisions (get, list, watch, create, update, patch,
// delete).
//
// What adapting a new kind costs: adapter.go, the whole of the user code,
// is 122 lines with its imports and comments (74 lines that are neither
// blank nor comments, imports included): a SetAdapter saying what a
// WorkerSet wants (its kind, replicas, selector, the Worker to make, the
// rolling update, history limit, collision count, minReadySeconds, pause
// and progress deadline, the last two 16 lines) and writing its status, a WorkerAdapter saying when a Worker is ready and
// since when, and SetupWithManager. Without rolling updates and status it
// was 59 lines (34). Everything else is childset's: expectations fed from
// the Worker informer, adoption of matching orphans and release of
// Workers that stop matching, slow-start creation, deletion order, the
// revisions and the rollout plan, events. types.go and crd.yaml are the
// API itself (Go types with hand-written DeepCopy methods, and the
// CustomResourceDefinitions), which a user has whatever the controller.
package workerset
