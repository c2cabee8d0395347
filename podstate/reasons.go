package podstate

// NodeUnreachablePodReason is the status.reason the node lifecycle
// controller gives a pod whose node stopped answering, so that its state
// can no longer be confirmed (upstream's pkg/util/node constant). Such a pod
// may still run; controllers that count replicas read the reason to tell it
// from a pod that really ended.
const NodeUnreachablePodReason = "NodeLost"
