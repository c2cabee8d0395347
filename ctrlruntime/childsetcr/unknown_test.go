package childsetcr_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
)

// heldClient is a fake client whose pod creates are stored and then, while
// faulty, answered with fault; while held, its pod reads (the core's cache
// reads in these tests) show no pod, as a cache whose watch is held.
type heldClient struct {
	client.WithWatch
	held, faulty atomic.Bool
}

func newHeldClient(t *testing.T, fault error, objs ...client.Object) *heldClient {
	h := &heldClient{}
	h.held.Store(true)
	h.faulty.Store(true)
	h.WithWatch = fakeClient(t, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := c.Create(ctx, obj, opts...); err != nil {
				return err
			}
			if _, pod := obj.(*corev1.Pod); pod && h.faulty.Load() {
				return fault
			}
			return nil
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, pods := list.(*corev1.PodList); pods && h.held.Load() {
				return nil
			}
			return c.List(ctx, list, opts...)
		},
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, pod := obj.(*corev1.Pod); pod && h.held.Load() {
				return apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, key.Name)
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}, objs...)
	return h
}

// stored lists the pods the API holds, whatever the cache shows.
func (h *heldClient) stored(t *testing.T) []corev1.Pod {
	t.Helper()
	held := h.held.Swap(false)
	defer h.held.Store(held)
	pods := &corev1.PodList{}
	require.NoError(t, h.List(context.Background(), pods, client.InNamespace("ns")))
	return pods.Items
}

// Through controller-runtime, pod creates stored and answered with a 504,
// or lost to the client's own deadline, keep their expectations while the
// cache is held: never more than 5 pods in 10 reconciles. Once the server
// answers again the creates are resolved and the owner converges. The
// previous code created 10 for 5.
func TestReconcileUnknownCreatesKeepExpectations(t *testing.T) {
	for name, fault := range map[string]error{
		"504":             apierrors.NewTimeoutError("request did not complete within 34s", 0),
		"client deadline": fmt.Errorf("Post \"https://apiserver/api/v1/namespaces/ns/pods\": %w", context.DeadlineExceeded),
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := newHeldClient(t, fault, replicaSet("web", 5, "web"))
			core, err := childsetcr.NewCore(c, nil, nil, rsSpec{}, podKind{})
			require.NoError(t, err)
			r := childsetcr.NewReconciler(core)
			for i := range 10 {
				_, _ = r.Reconcile(ctx, request("web")) // the errors are the faults'
				require.LessOrEqual(t, len(c.stored(t)), 5, "after reconcile %d with the cache held", i+1)
			}
			c.faulty.Store(false)
			c.held.Store(false)
			for range 20 {
				pods := c.stored(t)
				for i := range pods {
					core.ObserveAdd(&pods[i])
				}
				_, err := r.Reconcile(ctx, request("web"))
				require.NoError(t, err)
				require.LessOrEqual(t, len(c.stored(t)), 5)
			}
			assert.Len(t, c.stored(t), 5)
		})
	}
}
