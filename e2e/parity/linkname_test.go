package parity

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	appsclient "k8s.io/client-go/kubernetes/typed/apps/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/replicaset"

	// unsafe is required by go:linkname.
	_ "unsafe"
)

// Upstream's ReplicaSet status and slow-start logic lives in unexported
// functions of k8s.io/kubernetes/pkg/controller/replicaset: calculateStatus,
// updateReplicaSetStatus and slowStartBatch. ctrlkit's status and slowstart
// packages replace exactly those functions, so the differential tests must
// call them, not a re-typed copy (a copy would test the copy). Driving the
// whole exported ReplicaSetController would bury them under informers,
// expectations and goroutines, and could not feed them arbitrary inputs.
//
// The linkname directive binds the declarations below, which have no body, to upstream's
// compiled functions. The Go linker restricts this "pull" form only for
// symbols of the standard library; for a module like k8s.io/kubernetes it is
// accepted as is, without -ldflags=-checklinkname=0. The signatures must match
// upstream v1.37.2 exactly; a mismatch is not caught by the compiler, so each
// target also checks a few fixed cases with known answers.

//go:linkname upstreamCalculateStatus k8s.io/kubernetes/pkg/controller/replicaset.calculateStatus
func upstreamCalculateStatus(rs *appsv1.ReplicaSet, activePods []*v1.Pod, terminatingPods []*v1.Pod, manageReplicasErr error, controllerFeatures replicaset.ReplicaSetControllerFeatures, now time.Time) appsv1.ReplicaSetStatus

//go:linkname upstreamUpdateReplicaSetStatus k8s.io/kubernetes/pkg/controller/replicaset.updateReplicaSetStatus
func upstreamUpdateReplicaSetStatus(logger klog.Logger, c appsclient.ReplicaSetInterface, rs *appsv1.ReplicaSet, newStatus appsv1.ReplicaSetStatus, controllerFeatures replicaset.ReplicaSetControllerFeatures) (*appsv1.ReplicaSet, error)

//go:linkname upstreamSlowStartBatch k8s.io/kubernetes/pkg/controller/replicaset.slowStartBatch
func upstreamSlowStartBatch(count int, initialBatchSize int, fn func() error) (int, error)
