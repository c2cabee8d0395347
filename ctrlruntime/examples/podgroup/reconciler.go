package podgroup

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/claim"
	"github.com/ctrlkit/ctrlkit/ctrlruntime"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/crclient"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/expecthandler"
	"github.com/ctrlkit/ctrlkit/podranking"
	"github.com/ctrlkit/ctrlkit/podstate"
	"github.com/ctrlkit/ctrlkit/slowstart"
)

// BurstReplicas caps the pods one Reconcile creates or deletes, as
// upstream's ReplicaSet controller does.
const BurstReplicas = 500

// Reconciler keeps every PodGroup's pods at spec.replicas.
type Reconciler struct {
	client    client.Client // reads from the manager's cache
	apiReader client.Reader // reads from the API server
	pods      *crclient.PodControl
	tracker   *expecthandler.Tracker
}

// NewReconciler returns a reconciler reading through c (the manager's
// cached client), re-checking owners through apiReader before adopting, and
// recording events through recorder (nil records none).
func NewReconciler(c client.Client, apiReader client.Reader, recorder record.EventRecorder) *Reconciler {
	return &Reconciler{
		client:    c,
		apiReader: apiReader,
		pods:      crclient.NewPodControl(c, recorder),
		tracker:   expecthandler.NewTracker(GroupVersionKind.GroupKind()),
	}
}

// Tracker returns the reconciler's expectations, which its pod handler feeds.
func (r *Reconciler) Tracker() *expecthandler.Tracker { return r.tracker }

// SetupWithManager registers the controller: PodGroups, their pods through
// the expectations handler, and ctrlkit's queue.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("podgroup").
		For(New()).
		Watches(&corev1.Pod{}, r.tracker.Handler()).
		WithOptions(controller.Options{NewQueue: ctrlruntime.NewQueue}).
		Complete(r)
}

// Reconcile claims the group's pods, creates or deletes the difference when
// the cache has caught up with the previous writes, and writes
// status.replicas.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	group := New()
	if err := r.client.Get(ctx, req.NamespacedName, group); err != nil {
		// A deleted group's expectations are keyed by its UID: they expire
		// and no later group of the same name inherits them.
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	s, err := parseSpec(group)
	if err != nil {
		return reconcile.Result{}, reconcile.TerminalError(err)
	}
	needsSync := r.tracker.Satisfied(group)

	list := &corev1.PodList{}
	if err := r.client.List(ctx, list, client.InNamespace(group.GetNamespace())); err != nil {
		return reconcile.Result{}, err
	}
	active := make([]*corev1.Pod, 0, len(list.Items))
	for i := range list.Items {
		if podstate.IsActive(&list.Items[i]) {
			active = append(active, &list.Items[i])
		}
	}
	refs := claim.NewPodControllerRefManager(r.pods, group, s.selector, GroupVersionKind,
		claim.RecheckDeletionTimestamp(r.liveGroup(group)))
	owned, err := refs.ClaimPods(ctx, active)
	if err != nil {
		return reconcile.Result{}, err
	}

	var manageErr error
	if needsSync && group.GetDeletionTimestamp() == nil {
		manageErr = r.manage(ctx, group, s, owned)
	}
	if err := r.writeStatus(ctx, group, len(owned)); err != nil {
		return reconcile.Result{}, errors.Join(manageErr, err)
	}
	return reconcile.Result{}, manageErr
}

// manage creates or deletes the difference between owned and the desired
// count, raising expectations first.
func (r *Reconciler) manage(ctx context.Context, group *unstructured.Unstructured, s spec, owned []*corev1.Pod) error {
	diff := len(owned) - s.replicas
	switch {
	case diff < 0:
		n := min(-diff, BurstReplicas)
		if err := r.tracker.ExpectCreations(group, n); err != nil {
			return err
		}
		ref := metav1.NewControllerRef(group, GroupVersionKind)
		created, err := slowstart.Batch(ctx, n, slowstart.InitialBatchSize, func(ctx context.Context) error {
			err := r.pods.CreatePods(ctx, group.GetNamespace(), s.template, group, ref)
			if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
				return nil // the namespace is going away, and the group with it
			}
			return err
		})
		// No event will report the pods that were not created.
		for range n - created {
			r.tracker.CreationFailed(group)
		}
		return err
	case diff > 0:
		victims := podranking.PodsToDelete(owned, owned, min(diff, BurstReplicas))
		objs := make([]client.Object, len(victims))
		for i, p := range victims {
			objs[i] = p
		}
		if err := r.tracker.ExpectDeletions(group, objs); err != nil {
			return err
		}
		var errs []error
		for _, p := range victims {
			if err := r.pods.DeletePod(ctx, p.Namespace, p.Name, group); err != nil {
				if !apierrors.IsNotFound(err) {
					r.tracker.DeletionFailed(group, p)
					errs = append(errs, err)
				}
			}
		}
		return errors.Join(errs...)
	}
	return nil
}

// liveGroup reads the group from the API server for the adoption re-check,
// refusing a different incarnation of the same name.
func (r *Reconciler) liveGroup(group *unstructured.Unstructured) func(context.Context) (metav1.Object, error) {
	return func(ctx context.Context) (metav1.Object, error) {
		fresh := New()
		if err := r.apiReader.Get(ctx, client.ObjectKeyFromObject(group), fresh); err != nil {
			return nil, err
		}
		if fresh.GetUID() != group.GetUID() {
			return nil, fmt.Errorf("original PodGroup %s/%s is gone: got uid %v, wanted %v",
				group.GetNamespace(), group.GetName(), fresh.GetUID(), group.GetUID())
		}
		return fresh, nil
	}
}

// writeStatus patches status.replicas when it changed.
func (r *Reconciler) writeStatus(ctx context.Context, group *unstructured.Unstructured, replicas int) error {
	current, found, _ := unstructured.NestedInt64(group.Object, "status", "replicas")
	if found && current == int64(replicas) {
		return nil
	}
	patch := fmt.Appendf(nil, `{"status":{"replicas":%d}}`, replicas)
	if err := r.client.Status().Patch(ctx, group, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("updating status of PodGroup %s/%s: %w", group.GetNamespace(), group.GetName(), err)
	}
	return nil
}
