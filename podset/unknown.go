package podset

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/internal/unsure"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// keepUnknownCreate reports whether err leaves the outcome of creating the
// pod called name unknown (objectcontrol.OutcomeUnknown): the API server
// may have stored it and failed the request anyway (504, ServerTimeout, a
// reset connection, the write deadline). Its expectation then stays, as
// upstream keeps one whose answer was lost; upstream lowers it on any
// error, and the next sync, over a cache that had not seen the pod,
// created it again. A pod named here (name not empty) is recorded for
// resolveUnknown. A name chosen here cannot be another object's wanted
// name, so AlreadyExists is almost surely an earlier attempt of this very
// request (client-go resends a create answered with Retry-After) and is
// kept as unknown too.
func (c *Reconciler[O]) keepUnknownCreate(o O, expKey, name string, tmpl *v1.PodTemplateSpec, err error) bool {
	if err == nil || !(objectcontrol.OutcomeUnknown(err) || (name != "" && apierrors.IsAlreadyExists(err))) {
		return false
	}
	if name != "" {
		c.unsure.Add(expKey, unsure.Write[*v1.PodTemplateSpec]{Namespace: o.GetNamespace(), Name: name, Object: tmpl})
	}
	return true
}

// resolveUnknown asks again about the owner's pod creates and deletes of
// unknown outcome, so that once the API server answers again the owner
// waits for its cache, as after any write, and not for the expectations'
// TTL. As childset's core, it repeats the write, which is safe: a create
// is sent again under the name chosen before the first attempt
// (AlreadyExists: the first stored the pod; success: it had not, and the
// pod the owner wanted exists now), a delete is sent again (success or
// NotFound: the pod is gone or going). A pod the cache already shows needs
// no request; one held by an object the owner does not control is no
// longer expected. Any other answer leaves the write unknown and fails the
// sync, which is retried with backoff; the TTL remains the last resort.
//
// A pod control that cannot create by name (see podcontrol.NamedPodCreator)
// has its creates sent by generateName; those of unknown outcome keep
// their expectation until observed or expired.
func (c *Reconciler[O]) resolveUnknown(ctx context.Context, o O, expKey string) error {
	ref := metav1.NewControllerRef(o, c.gvk)
	obj := object(o)
	left, err := c.unsure.Resolve(ctx, expKey, func(ctx context.Context, w unsure.Write[*v1.PodTemplateSpec]) (bool, error) {
		if w.Delete {
			err := c.podControl.DeletePod(ctx, w.Namespace, w.Name, obj)
			return err == nil || apierrors.IsNotFound(err), err
		}
		cached, err := c.podLister.Pods(w.Namespace).Get(w.Name)
		switch {
		case err == nil:
			if !metav1.IsControlledBy(cached, o) {
				klog.FromContext(ctx).V(2).Info("Pod of unknown outcome held by another object", "pod", klog.KObj(cached), "owner", klog.KObj(o))
				c.expectations.LowerExpectations(expKey, 1, 0)
			}
			return true, nil
		case !apierrors.IsNotFound(err):
			return false, err
		}
		err = c.podControl.createPodNamed(ctx, w.Namespace, w.Name, w.Object, obj, ref)
		return err == nil || apierrors.IsAlreadyExists(err) || apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause), err
	})
	if left > 0 {
		return fmt.Errorf("%d pod creates or deletes of %s %s/%s still of unknown outcome: %w",
			left, c.gvk.Kind, o.GetNamespace(), o.GetName(), err)
	}
	return nil
}
