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
// strategy, Workers of an older template stay as they are. With
// spec.lifecycle.preDelete (label, timeoutSeconds), each Worker the
// WorkerSet would delete is marked with the label, set to "pending", and
// deleted only once whatever drains it changes or removes the label, or
// the timeout passes (childset.DeletionGate); the WorkerSet keeps its
// bounds meanwhile. RBAC: WorkerSets and their status, Workers, and
// apps/controllerrevisions (get, list, watch, create, update, patch,
// delete).
//
// What adapting a new kind costs: adapter.go, the whole of the user code,
// is 41 lines with its imports and comments (29 lines that are neither
// blank nor comments, imports included): a SetAdapter whose Describe hands
// childset the WorkerSet's fields (replicas, selector, minReadySeconds,
// the rolling update, history limit, pause, progress deadline and the
// pre-delete gate, which costs one line) and its
// status, which has childset.StatusFields' layout, so childset reads the
// collision count and progress there and writes each sync's status; its
// NewChild; a WorkerAdapter saying when a Worker is ready and since when;
// and SetupWithManager. With a getter per field and a SetStatus it was 122
// lines (74). Everything else is childset's: expectations fed from
// the Worker informer, adoption of matching orphans and release of
// Workers that stop matching, slow-start creation, deletion order, the
// revisions and the rollout plan, events. types.go and crd.yaml are the
// API itself (Go types with hand-written DeepCopy methods, and the
// CustomResourceDefinitions), which a user has whatever the controller.
package workerset
