package objectcontrol

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// DynamicWriter returns a Writer of one resource over client-go's dynamic
// client, for kinds that have no generated Go client (custom resources, or
// any kind held as *unstructured.Unstructured). The objects it creates
// must carry their apiVersion and kind: the dynamic client encodes nothing
// without them, and Create refuses an object that lacks either before any
// request. An empty namespace addresses a cluster-scoped object. Custom
// resources take types.MergePatchType, so give that to New.
//
//	workers := objectcontrol.New("Worker", objectcontrol.DynamicWriter(dyn, workerGVR),
//		recorder, types.MergePatchType)
//
// A nil client panics.
func DynamicWriter(client dynamic.Interface, resource schema.GroupVersionResource) Writer[*unstructured.Unstructured] {
	if client == nil {
		panic("objectcontrol: DynamicWriter: nil client")
	}
	return dynamicWriter{client: client, resource: resource}
}

type dynamicWriter struct {
	client   dynamic.Interface
	resource schema.GroupVersionResource
}

// errNoTypeMeta is returned for an object the dynamic client could not
// encode: its message names what is missing, where the client's own error
// would only say that encoding failed.
var errNoTypeMeta = errors.New("objectcontrol: an unstructured object needs apiVersion and kind to be created")

func (w dynamicWriter) api(namespace string) dynamic.ResourceInterface {
	if namespace == "" {
		return w.client.Resource(w.resource)
	}
	return w.client.Resource(w.resource).Namespace(namespace)
}

func (w dynamicWriter) Create(ctx context.Context, namespace string, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if obj == nil || obj.GetAPIVersion() == "" || obj.GetKind() == "" {
		return nil, errNoTypeMeta
	}
	return w.api(namespace).Create(ctx, obj, metav1.CreateOptions{})
}

func (w dynamicWriter) Delete(ctx context.Context, namespace, name string) error {
	return w.api(namespace).Delete(ctx, name, metav1.DeleteOptions{})
}

func (w dynamicWriter) Patch(ctx context.Context, namespace, name string, patchType types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	return w.api(namespace).Patch(ctx, name, patchType, data, metav1.PatchOptions{})
}

// PatchSubresource patches the named object's subresource, or the object
// itself when subresource is "": the dynamic client would otherwise ask
// for a path with an empty last segment. It makes DynamicWriter a
// SubresourceWriter, which a childset in-place update writes through.
func (w dynamicWriter) PatchSubresource(ctx context.Context, namespace, name, subresource string, patchType types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	if subresource == "" {
		return w.Patch(ctx, namespace, name, patchType, data)
	}
	return w.api(namespace).Patch(ctx, name, patchType, data, metav1.PatchOptions{}, subresource)
}
