package workerset

import (
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/childset"
)

// This file is all the code a user writes to put WorkerSets on childset:
// the owner adapter and the child adapter. doc.go states its size, and a
// test keeps the two in step.

// Set is childset's owner adapter for WorkerSets held as unstructured
// objects in a dynamic informer's indexer.
type Set struct{ Indexer cache.Indexer }

// Get reads a WorkerSet from the cache; a missing one is NotFound.
func (s Set) Get(namespace, name string) (*unstructured.Unstructured, error) {
	obj, found, err := s.Indexer.GetByKey(cache.NewObjectName(namespace, name).String())
	if err != nil {
		return nil, fmt.Errorf("WorkerSet cache: %w", err)
	}
	set, ok := obj.(*unstructured.Unstructured)
	if !found || !ok {
		return nil, apierrors.NewNotFound(SetResource.GroupResource(), name)
	}
	return set, nil
}

// GroupVersionKind is WorkerSet's, written into the Workers' controller
// references.
func (Set) GroupVersionKind() schema.GroupVersionKind { return SetKind }

// Replicas reads spec.replicas: absent or null is 1, as for a ReplicaSet. A
// malformed value reads as 0 here, but never gets this far: NewChild, which
// the core calls first, refuses it.
func (Set) Replicas(set *unstructured.Unstructured) int32 {
	n, err := childset.NestedReplicas(set.Object, 1, "spec", "replicas")
	if err != nil {
		return 0
	}
	return n
}

// Selector reads spec.selector, a metav1.LabelSelector.
func (Set) Selector(set *unstructured.Unstructured) (labels.Selector, error) {
	return childset.NestedSelector(set.Object, "spec", "selector")
}

// NewChild builds a Worker from spec.template. It also checks
// spec.replicas: its error is the one the core turns into a Warning event
// (TemplateInvalid) with nothing written, which is what a malformed
// replica count deserves.
func (Set) NewChild(set *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if _, err := childset.NestedReplicas(set.Object, 1, "spec", "replicas"); err != nil {
		return nil, err
	}
	lbls, _, err := unstructured.NestedStringMap(set.Object, "spec", "template", "metadata", "labels")
	if err != nil {
		return nil, fmt.Errorf("spec.template.metadata.labels: %w", err)
	}
	spec, found, err := unstructured.NestedMap(set.Object, "spec", "template", "spec")
	if err != nil {
		return nil, fmt.Errorf("spec.template.spec: %w", err)
	}
	worker := &unstructured.Unstructured{Object: map[string]any{}}
	worker.SetGroupVersionKind(WorkerKind)
	worker.SetLabels(lbls)
	if found {
		worker.Object["spec"] = spec
	}
	return worker, nil
}

// DeletionGate reads spec.lifecycle.preDelete: a label (none: no gate) and
// timeoutSeconds (absent or 0: childset's default), which the CRD's schema
// types. A Worker to delete is marked with the label and kept until
// whatever drains it clears it, or the timeout passes.
func (Set) DeletionGate(set *unstructured.Unstructured) childset.DeletionGate {
	label, _, _ := unstructured.NestedString(set.Object, "spec", "lifecycle", "preDelete", "label")
	seconds, _, _ := unstructured.NestedInt64(set.Object, "spec", "lifecycle", "preDelete", "timeoutSeconds")
	return childset.DeletionGate{Label: label, Timeout: time.Duration(seconds) * time.Second}
}

// Workers is childset's child adapter for Workers: the listing is
// childset.IndexerLister over the Worker informer's indexer.
type Workers struct {
	childset.Lister[*unstructured.Unstructured]
}

// Ready is status.ready == true; absent or not a boolean is not ready.
func (Workers) Ready(worker *unstructured.Unstructured) bool {
	ready, _, _ := unstructured.NestedBool(worker.Object, "status", "ready")
	return ready
}
