package podset

import (
	"context"
	"errors"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/podstate"
)

// checkSpec returns the childset.SpecError of an owner whose selector (already
// converted by the Kind, or selErr) or template the controller can never
// converge on, or nil. A nil template counts as one without labels.
func checkSpec(selector labels.Selector, selErr error, tmpl *v1.PodTemplateSpec) *childset.SpecError {
	var templateLabels map[string]string
	if tmpl != nil {
		templateLabels = tmpl.Labels
	}
	var specErr *childset.SpecError
	if errors.As(childset.CheckSelector(selector, selErr, templateLabels), &specErr) {
		return specErr
	}
	return nil
}

// refuse handles an owner whose spec failed checkSpec. It records a Warning
// event and writes the status with StatusInput.SpecErr set, counting the
// pods the owner already controls; it claims, adopts, releases, creates and
// deletes nothing. It returns nil, as retrying cannot fix the object: the
// owner's next update syncs it again. Only a failed status write is
// returned, to be retried with backoff like any failed write.
func (c *Reconciler[O]) refuse(ctx context.Context, o O, key, expKey string, guard *consistency.Guard, specErr *childset.SpecError, withTerminating bool) error {
	logger := klog.FromContext(ctx)
	c.recorder.Eventf(object(o), v1.EventTypeWarning, specErr.Reason,
		"%v; no pods are created, deleted, adopted or released until the object changes", specErr)
	logger.Error(specErr, "Refusing the owner's spec; not syncing its pods until it changes", "kind", c.gvk.Kind, "key", key)

	pods, err := c.podsForOwner(o)
	if err != nil {
		return err
	}
	uid := o.GetUID()
	var active, terminating []*v1.Pod
	for _, pod := range pods {
		if ref := metav1.GetControllerOfNoCopy(pod); ref == nil || ref.UID != uid {
			continue
		}
		switch {
		case podstate.IsActive(pod):
			active = append(active, pod)
		case withTerminating && podstate.IsTerminating(pod):
			terminating = append(terminating, pod)
		}
	}
	var templateLabels map[string]string
	if tmpl := c.kind.Template(o); tmpl != nil {
		templateLabels = tmpl.Labels
	}
	in := StatusInput{
		Active: active, Terminating: terminating, TerminatingReplicas: withTerminating, SpecErr: specErr,
		Now: c.cfg.Clock.Now(), templateLabels: templateLabels, minReadySeconds: c.kind.MinReadySeconds(o),
	}
	return c.writeStatus(ctx, o, key, expKey, guard, in)
}
