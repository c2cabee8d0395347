package expecthandler_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/ctrlruntime"
)

func owner(name string, uid types.UID) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: uid}}
}

func controllerRef(o metav1.Object) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: o.GetName(), UID: o.GetUID(), Controller: ptr.To(true)}
}

func ownedPod(name, rv string, o metav1.Object) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
	if o != nil {
		p.OwnerReferences = []metav1.OwnerReference{controllerRef(o)}
	}
	return p
}

// drain returns the queued requests and their priorities, in queue order.
func drain(t *testing.T, q *ctrlruntime.Queue[reconcile.Request]) map[string]int {
	t.Helper()
	out := map[string]int{}
	for q.Len() > 0 {
		req, prio, shutdown := q.GetWithPriority()
		require.False(t, shutdown)
		out[req.String()] = prio
		q.Done(req)
	}
	return out
}

type reconcileRequest = reconcile.Request
