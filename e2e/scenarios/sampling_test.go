package scenarios

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// The samplers see every event of the objects they watch through these two
// helpers, so they all hear adds, updates and deletes the same way.

// onEvents sends each add, update and delete of inf to record, deleted
// telling a delete; a handler that cannot be added fails t, naming what.
func onEvents(t *testing.T, what string, inf cache.SharedIndexInformer, record func(obj any, deleted bool)) {
	t.Helper()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { record(obj, false) },
		UpdateFunc: func(_, cur any) { record(cur, false) },
		DeleteFunc: func(obj any) { record(obj, true) },
	}); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// startDynamic sends the events of each resource of factory to its record,
// starts factory until stop is closed, and waits for its caches.
func startDynamic(t *testing.T, what string, factory dynamicinformer.DynamicSharedInformerFactory, stop <-chan struct{},
	record map[schema.GroupVersionResource]func(obj any, deleted bool)) {
	t.Helper()
	for gvr, rec := range record {
		onEvents(t, what, factory.ForResource(gvr).Informer(), rec)
	}
	factory.Start(stop)
	for gvr, ok := range factory.WaitForCacheSync(stop) {
		if !ok {
			t.Fatalf("%s: %s did not sync", what, gvr)
		}
	}
}
