package simcluster

import (
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// FailAfterApplying makes Client apply every verb ("create", "delete", ...
// or "*") on resource ("configmaps", "pods", ... or "*") as usual and then,
// when errFor returns an error for the action, answer with that error
// instead of the result: an API server that stored an object but timed out
// answering (504, ServerTimeout), or a connection lost after the request
// went out. A write the store refuses (AlreadyExists, NotFound, ...) is
// answered with that refusal, as errFor is not asked. errFor may be called
// from several goroutines at once. Call it before the client is in use, as
// any PrependReactor; writes through Tracker or Add are not affected.
func (c *Cluster) FailAfterApplying(verb, resource string, errFor func(k8stesting.Action) error) {
	if errFor == nil {
		panic("simcluster: FailAfterApplying: nil errFor")
	}
	apply := k8stesting.ObjectReaction(c.tracker)
	c.client.PrependReactor(verb, resource, func(action k8stesting.Action) (bool, runtime.Object, error) {
		handled, obj, err := apply(action)
		if err != nil {
			return handled, obj, err
		}
		if fail := errFor(action); fail != nil {
			return true, nil, fail
		}
		return handled, obj, nil
	})
}
