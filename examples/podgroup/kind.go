package podgroup

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/podset"
)

// CRD is the PodGroup CustomResourceDefinition (crd.yaml), for installing it
// from code.
//
//go:embed crd.yaml
var CRD []byte

// Resource is the PodGroup resource of CRD.
var Resource = schema.GroupVersionResource{Group: "example.ctrlkit.io", Version: "v1alpha1", Resource: "podgroups"}

// Kind is podset's adapter for PodGroups held as unstructured objects: it
// reads spec from the object, reads the cache through an informer's indexer
// and writes status through the dynamic client.
type Kind struct {
	client  dynamic.Interface
	indexer cache.Indexer
}

var _ podset.Kind[*unstructured.Unstructured] = Kind{}

// NewKind returns the adapter over client and the indexer of a PodGroup
// informer (a dynamic informer for Resource).
func NewKind(client dynamic.Interface, indexer cache.Indexer) Kind {
	return Kind{client: client, indexer: indexer}
}

// GroupVersionKind is PodGroup in example.ctrlkit.io/v1alpha1.
func (Kind) GroupVersionKind() schema.GroupVersionKind {
	return Resource.GroupVersion().WithKind("PodGroup")
}

// Replicas reads spec.replicas. A missing or non-integer value gives 1, the
// default a ReplicaSet gets; a value past int32 is clamped (the CRD's schema
// rejects both, so only objects that bypassed it carry them).
func (Kind) Replicas(pg *unstructured.Unstructured) int32 {
	n, found, err := unstructured.NestedInt64(pg.Object, "spec", "replicas")
	if !found || err != nil {
		return 1
	}
	return int32(min(max(n, math.MinInt32), math.MaxInt32))
}

// errInvalidSpec marks a PodGroup whose spec cannot be acted on.
var errInvalidSpec = errors.New("invalid PodGroup spec")

// Selector converts spec.selector, a metav1.LabelSelector. A missing, empty
// or malformed one is an error: an empty selector would select every pod of
// the namespace.
func (Kind) Selector(pg *unstructured.Unstructured) (labels.Selector, error) {
	raw, found, err := unstructured.NestedMap(pg.Object, "spec", "selector")
	if err != nil || !found {
		return nil, fmt.Errorf("%w: spec.selector missing or not an object", errInvalidSpec)
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
		return nil, fmt.Errorf("%w: spec.selector: %w", errInvalidSpec, err)
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return nil, fmt.Errorf("%w: spec.selector: %w", errInvalidSpec, err)
	}
	if sel.Empty() {
		return nil, fmt.Errorf("%w: an empty spec.selector would select every pod", errInvalidSpec)
	}
	return sel, nil
}

// Template converts spec.template; a missing or malformed one gives nil,
// which podset refuses like a template whose labels the selector does not
// match: a Warning event, and no pod created, deleted or adopted.
func (Kind) Template(pg *unstructured.Unstructured) *v1.PodTemplateSpec {
	raw, found, err := unstructured.NestedMap(pg.Object, "spec", "template")
	if err != nil || !found {
		return nil
	}
	var t v1.PodTemplateSpec
	if runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &t) != nil {
		return nil
	}
	return &t
}

// MinReadySeconds is 0: a PodGroup has no such field, so a ready pod is
// available at once.
func (Kind) MinReadySeconds(*unstructured.Unstructured) int32 { return 0 }

// Get reads a PodGroup from the informer cache.
func (k Kind) Get(namespace, name string) (*unstructured.Unstructured, error) {
	obj, ok, err := k.indexer.GetByKey(cache.NewObjectName(namespace, name).String())
	if err != nil {
		return nil, fmt.Errorf("podgroup cache: %w", err)
	}
	pg, isPG := obj.(*unstructured.Unstructured)
	if !ok || !isPG {
		return nil, apierrors.NewNotFound(Resource.GroupResource(), name)
	}
	return pg, nil
}

// GetUncached reads a PodGroup from the API server.
func (k Kind) GetUncached(ctx context.Context, namespace, name string) (*unstructured.Unstructured, error) {
	return k.client.Resource(Resource).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
}

// UpdateStatus writes podset's counts and the observed generation to the
// status subresource. Like upstream's ReplicaSet status update it skips the
// write when nothing changed and, on a conflict, retries once on a fresh read.
func (k Kind) UpdateStatus(ctx context.Context, pg *unstructured.Unstructured, in podset.StatusInput) (*unstructured.Unstructured, error) {
	ns, name := pg.GetNamespace(), pg.GetName()
	api := k.client.Resource(Resource).Namespace(ns)
	for attempt := 0; ; attempt++ {
		next := pg.DeepCopy()
		k.SetStatus(next, in)
		if equality.Semantic.DeepEqual(pg.Object["status"], next.Object["status"]) {
			return pg, nil
		}
		updated, err := api.UpdateStatus(ctx, next, metav1.UpdateOptions{})
		if err == nil {
			return updated, nil
		}
		if attempt > 0 || !apierrors.IsConflict(err) {
			return nil, fmt.Errorf("update status of PodGroup %s/%s: %w", ns, name, err)
		}
		if pg, err = k.GetUncached(ctx, ns, name); err != nil {
			return nil, fmt.Errorf("re-read PodGroup %s/%s for its status: %w", ns, name, err)
		}
	}
}

// SetStatus replaces pg's status with podset's counts and pg's generation
// as observedGeneration. It is the part of UpdateStatus that does not talk
// to the API server, for frameworks that write the status their own way.
func (Kind) SetStatus(pg *unstructured.Unstructured, in podset.StatusInput) {
	counts := in.Counts()
	// Every value is a JSON-compatible int64, so setting the map cannot fail.
	_ = unstructured.SetNestedMap(pg.Object, map[string]any{
		"replicas":             int64(counts.Replicas),
		"fullyLabeledReplicas": int64(counts.FullyLabeledReplicas),
		"readyReplicas":        int64(counts.ReadyReplicas),
		"availableReplicas":    int64(counts.AvailableReplicas),
		"observedGeneration":   pg.GetGeneration(),
	}, "status")
}
