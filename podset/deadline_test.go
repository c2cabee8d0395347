package podset

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ctrlkit/ctrlkit/expectations"
)

// hangingWrites blocks every call that ignores its context until the test
// releases them all.
type hangingWrites struct {
	release chan struct{}
	once    sync.Once
	calls   atomic.Int32
}

func newHangingWrites(t *testing.T) *hangingWrites {
	h := &hangingWrites{release: make(chan struct{})}
	t.Cleanup(h.releaseAll)
	return h
}

func (h *hangingWrites) hang() error {
	h.calls.Add(1)
	<-h.release
	return nil
}

func (h *hangingWrites) releaseAll() { h.once.Do(func() { close(h.release) }) }

// hangingPodControl's writes never return before the release, whatever
// their context.
type hangingPodControl struct{ *hangingWrites }

func (h hangingPodControl) CreatePods(context.Context, string, *v1.PodTemplateSpec, runtime.Object, *metav1.OwnerReference) error {
	return h.hang()
}

func (h hangingPodControl) CreatePodsWithGenerateName(context.Context, string, *v1.PodTemplateSpec, runtime.Object, *metav1.OwnerReference, string) error {
	return h.hang()
}

func (h hangingPodControl) CreatePodWithName(context.Context, string, string, *v1.PodTemplateSpec, runtime.Object, *metav1.OwnerReference) error {
	return h.hang()
}

func (h hangingPodControl) DeletePod(context.Context, string, string, runtime.Object) error {
	return h.hang()
}

func (h hangingPodControl) PatchPod(context.Context, string, string, []byte) error { return h.hang() }

// hangingStatus is a Kind whose status writes hang.
type hangingStatus struct {
	Kind[*appsv1.ReplicaSet]
	*hangingWrites
}

func (h hangingStatus) UpdateStatus(context.Context, *appsv1.ReplicaSet, StatusInput) (*appsv1.ReplicaSet, error) {
	return nil, h.hang()
}

// hangingReread is a Kind whose uncached reads, the re-read of the owner
// before an adoption, hang.
type hangingReread struct {
	Kind[*appsv1.ReplicaSet]
	*hangingWrites
}

func (h hangingReread) GetUncached(context.Context, string, string) (*appsv1.ReplicaSet, error) {
	return nil, h.hang()
}

// TestHungWritesDoNotPinTheOwner: a create, delete, adoption patch or status
// write, or the owner's re-read before an adoption, that never returns, and ignores its context, holds the sync only
// until the write timeout. Before, the sync waited forever and the owner's
// key stayed in processing. The abandoned calls end when released, before
// goleak looks.
func TestHungWritesDoNotPinTheOwner(t *testing.T) {
	const timeout = 50 * time.Millisecond
	for _, tc := range []struct {
		name     string
		replicas int32
		pods     func(rs *appsv1.ReplicaSet) []*v1.Pod
		status   bool // hang the status write instead of the pod writes
		reread   bool // hang the owner's re-read instead of the pod writes
		adds     int64
	}{
		// One create of the first slow-start batch hangs: its outcome is
		// unknown, so its expectation stays; the other was never tried.
		{name: "create", replicas: 2, adds: 1},
		{name: "delete", replicas: 0, pods: func(rs *appsv1.ReplicaSet) []*v1.Pod {
			return []*v1.Pod{newPod("owned", rs, v1.PodRunning, fooBar, true)}
		}},
		{name: "adoption", replicas: 1, pods: func(rs *appsv1.ReplicaSet) []*v1.Pod {
			return []*v1.Pod{newPod("orphan", rs, v1.PodRunning, fooBar, false)}
		}},
		{name: "status", replicas: 0, status: true},
		{name: "re-read before adopting", replicas: 1, reread: true, pods: func(rs *appsv1.ReplicaSet) []*v1.Pod {
			return []*v1.Pod{newPod("orphan", rs, v1.PodRunning, fooBar, false)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ignore := goleak.IgnoreCurrent()
			t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
			h := newHangingWrites(t) // released before goleak looks
			rs := newRS("rs", tc.replicas, fooBar)
			opts := []Option{WithWriteTimeout(timeout)}
			var wrap func(Kind[*appsv1.ReplicaSet]) Kind[*appsv1.ReplicaSet]
			switch {
			case tc.status:
				wrap = func(k Kind[*appsv1.ReplicaSet]) Kind[*appsv1.ReplicaSet] {
					return hangingStatus{Kind: k, hangingWrites: h}
				}
			case tc.reread:
				wrap = func(k Kind[*appsv1.ReplicaSet]) Kind[*appsv1.ReplicaSet] {
					return hangingReread{Kind: k, hangingWrites: h}
				}
			default:
				opts = append(opts, WithPodControl(hangingPodControl{h}))
			}
			e := newEnvWrapped(t, wrap, []runtime.Object{rs}, opts...)
			t.Cleanup(e.c.Queue().ShutDown) // its delay loop, for goleak
			e.addOwner(rs)
			if tc.pods != nil {
				e.addPods(tc.pods(rs)...)
			}
			key := rs.Namespace + "/" + rs.Name

			e.c.Queue().Add(key)
			returned := make(chan struct{})
			start := time.Now()
			go func() {
				defer close(returned)
				e.c.ProcessNextWorkItem(e.ctx)
			}()
			select {
			case <-returned:
			case <-time.After(10 * time.Second):
				h.releaseAll()
				<-returned
				t.Fatal("the sync waited for a write that never returns")
			}
			assert.Less(t, time.Since(start), 5*time.Second)
			assert.NotZero(t, h.calls.Load(), "a write was attempted")
			assert.Equal(t, 1, e.c.Queue().NumRequeues(key), "the failure is retried with backoff")

			// The key is no longer in processing: it can be handed out.
			e.c.Queue().Forget(key)
			e.c.Queue().Add(key)
			got, _ := e.c.Queue().Get()
			assert.Equal(t, key, got)
			e.c.Queue().Done(got)

			if tc.adds > 0 {
				exp, ok, err := e.c.Expectations().GetExpectations(expectations.OwnerKeyFor(rs))
				require.NoError(t, err)
				require.True(t, ok)
				add, _ := exp.GetExpectations()
				assert.Equal(t, tc.adds, add, "creations whose outcome is unknown stay expected")
			}
		})
	}
}
