package gang

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/podstate"
)

// This file is all the code a user writes to put Gangs on childset: the
// owner adapter over unstructured Gangs and the child adapter over typed
// pods. doc.go states its size, and a test keeps the two in step.

// Gangs is childset's owner adapter for Gangs held as unstructured objects
// in a dynamic informer's indexer.
type Gangs struct{ Indexer cache.Indexer }

// Get reads a Gang from the cache; a missing one is NotFound.
func (g Gangs) Get(namespace, name string) (*unstructured.Unstructured, error) {
	obj, found, err := g.Indexer.GetByKey(cache.NewObjectName(namespace, name).String())
	if err != nil {
		return nil, fmt.Errorf("gang cache: %w", err)
	}
	gang, ok := obj.(*unstructured.Unstructured)
	if !found || !ok {
		return nil, apierrors.NewNotFound(Resource.GroupResource(), name)
	}
	return gang, nil
}

// GroupVersionKind is Gang's, written into the pods' controller references.
func (Gangs) GroupVersionKind() schema.GroupVersionKind { return Kind }

// Replicas reads spec.replicas: absent or null is 1. A malformed value
// reads as 0 here, but never gets this far: NewChild refuses it first.
func (Gangs) Replicas(gang *unstructured.Unstructured) int32 {
	n, err := childset.NestedReplicas(gang.Object, 1, "spec", "replicas")
	if err != nil {
		return 0
	}
	return n
}

// Selector is Label=<gang name>.
func (Gangs) Selector(gang *unstructured.Unstructured) (labels.Selector, error) {
	return labels.SelectorFromSet(labels.Set{Label: gang.GetName()}), nil
}

// NewChild builds a pod from spec.template, labelled with Label. It also
// checks spec.replicas and that the name fits a label value: its error is
// the one the core turns into a Warning event (TemplateInvalid) with
// nothing written.
func (Gangs) NewChild(gang *unstructured.Unstructured) (*v1.Pod, error) {
	if _, err := childset.NestedReplicas(gang.Object, 1, "spec", "replicas"); err != nil {
		return nil, err
	}
	if errs := validation.IsValidLabelValue(gang.GetName()); len(errs) > 0 {
		return nil, fmt.Errorf("the name cannot be the value of %s: %s", Label, strings.Join(errs, "; "))
	}
	raw, found, err := unstructured.NestedMap(gang.Object, "spec", "template")
	if err != nil {
		return nil, fmt.Errorf("spec.template: %w", err)
	}
	if !found {
		return nil, errors.New("spec.template is missing")
	}
	var template v1.PodTemplateSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &template); err != nil {
		return nil, fmt.Errorf("spec.template: %w", err)
	}
	lbls := maps.Clone(template.Labels)
	if lbls == nil {
		lbls = map[string]string{}
	}
	lbls[Label] = gang.GetName()
	pod := &v1.Pod{Spec: template.Spec}
	pod.Labels, pod.Annotations = lbls, template.Annotations
	return pod, nil
}

// DeletionGate reads spec.lifecycle.preDelete: a label (none: no gate) and
// timeoutSeconds (absent or 0: childset's default), which the CRD's schema
// types. A pod to delete is marked with the label and kept, its index
// held, until whatever hands its work over clears it, or the timeout
// passes.
func (Gangs) DeletionGate(gang *unstructured.Unstructured) childset.DeletionGate {
	label, _, _ := unstructured.NestedString(gang.Object, "spec", "lifecycle", "preDelete", "label")
	seconds, _, _ := unstructured.NestedInt64(gang.Object, "spec", "lifecycle", "preDelete", "timeoutSeconds")
	return childset.DeletionGate{Label: label, Timeout: time.Duration(seconds) * time.Second}
}

// Pods is childset's child adapter for the pods: the listing is
// childset.IndexerLister over the pod informer's indexer.
type Pods struct{ childset.Lister[*v1.Pod] }

// Ready is the pod's Ready condition.
func (Pods) Ready(pod *v1.Pod) bool { return podstate.IsReady(pod) }
