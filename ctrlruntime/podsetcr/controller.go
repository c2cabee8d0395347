package podsetcr

import (
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
)

// Controller is podset's core as a plain controller-runtime
// reconcile.Reconciler: the set core's host (childsetcr.Reconciler) over
// pods. SetupWithManager registers it with controller-runtime's builder,
// so the manager runs it as any controller: its queue (the priority queue
// when enabled), leader election, warm-up, reconcile timeouts and
// workqueue metrics apply.
type Controller[O client.Object] struct {
	*childsetcr.Reconciler[O, *corev1.Pod]

	name      string
	hasSynced []cache.InformerSynced
}

// Name is the controller's name: its work queue's name in the workqueue
// metrics and the source of its events.
func (c *Controller[O]) Name() string { return c.name }

// ReadyzCheck reports ready once the manager's pod and owner informers have
// synced; mgr.AddReadyzCheck takes it.
func (c *Controller[O]) ReadyzCheck(*http.Request) error {
	for _, synced := range c.hasSynced {
		if !synced() {
			return fmt.Errorf("podset controller %s: informers not synced", c.name)
		}
	}
	return nil
}
