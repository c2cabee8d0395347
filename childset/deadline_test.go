package childset_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// stuckWriter is a writer that ignores its context: every write blocks
// until the test releases it, then does nothing.
type stuckWriter struct {
	release <-chan struct{}
}

func (w stuckWriter) Create(context.Context, string, *v1.ConfigMap, runtime.Object, *metav1.OwnerReference) (*v1.ConfigMap, error) {
	<-w.release
	return nil, errors.New("released")
}

func (w stuckWriter) Delete(context.Context, string, string, runtime.Object) error {
	<-w.release
	return errors.New("released")
}

func (w stuckWriter) Patch(context.Context, string, string, []byte) error {
	<-w.release
	return errors.New("released")
}

var _ objectcontrol.Interface[*v1.ConfigMap] = stuckWriter{}

// A writer that ignores its context cannot hold a sync past the write
// timeout: Reconcile stops waiting at the deadline, for a create, a delete
// and an adoption patch alike, with an error wrapping
// context.DeadlineExceeded, and the abandoned writes' goroutines end when
// the writer returns. The previous code waited for the writer: Reconcile
// was still blocked long after the deadline.
func TestWriterIgnoringItsContextIsAbandonedAtTheWriteTimeout(t *testing.T) {
	const timeout = 200 * time.Millisecond
	for _, tc := range []struct {
		name     string
		replicas int32
		children []*v1.ConfigMap
	}{
		{name: "create", replicas: 1},
		{name: "delete", replicas: 0, children: []*v1.ConfigMap{newChild("web-a", newOwner("web", 0), map[string]string{"app": "web"})}},
		{name: "adoption patch", replicas: 1, children: []*v1.ConfigMap{newChild("web-a", nil, map[string]string{"app": "web"})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ignore := goleak.IgnoreCurrent()
			e := newEnv(t)
			e.addOwner(newOwner("web", tc.replicas))
			e.seed(tc.children...)
			release := make(chan struct{})
			r := childset.NewReconciler[*appsv1.ReplicaSet, *v1.ConfigMap](rsSpec{e.owners},
				cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)}, stuckWriter{release},
				childset.WithWriteTimeout(timeout))

			done := make(chan error, 1)
			start := time.Now()
			go func() {
				_, err := r.Reconcile(context.Background(), ns+"/web")
				done <- err
			}()
			select {
			case err := <-done:
				took := time.Since(start)
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("Reconcile: %v, want an error wrapping context.DeadlineExceeded", err)
				}
				if took < timeout {
					t.Errorf("Reconcile returned after %v, before the %v deadline", took, timeout)
				}
			case <-time.After(10 * timeout):
				t.Errorf("Reconcile still blocked %v after a %v write deadline", 10*timeout, timeout)
				close(release)
				if err := <-done; err != nil {
					t.Logf("the blocked reconcile then returned %v", err)
				}
				return
			}
			close(release)
			goleak.VerifyNone(t, ignore)
		})
	}
}
