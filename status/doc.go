// Package status counts a workload's replicas and keeps the status of
// ReplicaSets and ReplicationControllers: the replica counts, the
// ReplicaFailure condition, and the write to the status subresource with a
// single retry, with the behaviour of upstream's replicaset controller
// (calculateStatus, updateReplicaSetStatus and the condition helpers).
//
// A sync loop computes the status from the pods it claimed and the error of
// its manageReplicas, writes it, and requeues on error:
//
//	st := status.CalculateReplicaSetStatus(rs, active, terminating, manageErr, now, status.WithTerminatingReplicas())
//	if _, err := status.UpdateReplicaSetStatus(ctx, client.AppsV1().ReplicaSets(rs.Namespace), rs, st); err != nil {
//		return err
//	}
//
// The ...ReplicationController... functions do the same for
// ReplicationControllers. CountReplicas is the part any workload controller
// can reuse, and Progress keeps a rolling set's Progressing condition as
// upstream's Deployment controller does (pause and progress deadline). The logger comes from the context. A nil spec.replicas counts as
// the API default of 1, and nil entries in pod lists are skipped.
package status
