package simkit

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
)

// clusterTracker lets controller-runtime's fake client write to the
// simulated cluster's store. The fake client checks an update's
// resourceVersion against the stored object and then advances it by one
// before handing the object to its tracker, as its own store expects; the
// cluster checks and assigns resourceVersions itself, in one step with the
// write. So Update hands the cluster the version the caller read (one
// less), which the cluster checks again, atomically, and replaces with its
// own. Everything else passes through. One consequence: an unconditional
// update (no resourceVersion, for the kinds that allow it) that races with
// another writer between the fake client's read and the write conflicts,
// where an apiserver would apply it; retry it as any update.
type clusterTracker struct {
	k8stesting.ObjectTracker
}

func (t clusterTracker) Update(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.UpdateOptions) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("simkit: update %s: %w", gvr.Resource, err)
	}
	if rv, err := strconv.ParseUint(m.GetResourceVersion(), 10, 64); err == nil && rv > 0 {
		m.SetResourceVersion(strconv.FormatUint(rv-1, 10))
	}
	return t.ObjectTracker.Update(gvr, obj, ns, opts...)
}
