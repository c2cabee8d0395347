package ctrlruntime_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/ctrlruntime"
)

func TestKeysAndRequests(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	for _, key := range []string{"ns/web", "cluster-wide", "a/b/c", "ns/"} {
		ctrlruntime.EnqueueKey(q, key, false)
	}
	assert.Equal(t, 2, q.Len(), "malformed keys are dropped")
	for _, want := range []string{"ns/web", "cluster-wide"} {
		req, _ := q.Get()
		assert.Equal(t, want, ctrlruntime.Key(req))
		q.Done(req)
	}
	assert.Equal(t, "ns/a", ctrlruntime.Key(reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "a"}}))
}

func TestResult(t *testing.T) {
	stale := fmt.Errorf("sync: %w", &consistency.StaleCacheError{OwnerKey: "ns/a", GroupResource: schema.GroupResource{Resource: "pods"}, WroteRV: "2", ReadRV: "1"})
	res, err := ctrlruntime.Result(0, stale, 3*time.Second)
	assert.NoError(t, err, "a stale cache is not a failure")
	assert.Equal(t, reconcile.Result{RequeueAfter: 3 * time.Second}, res)

	boom := errors.New("boom")
	res, err = ctrlruntime.Result(time.Minute, boom, time.Second)
	assert.Same(t, boom, err)
	assert.Zero(t, res)

	res, err = ctrlruntime.Result(time.Minute, nil, time.Second)
	assert.NoError(t, err)
	assert.Equal(t, reconcile.Result{RequeueAfter: time.Minute}, res)
}
