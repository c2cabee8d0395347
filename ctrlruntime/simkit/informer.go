package simkit

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// newInformer is the cache's cache.Options.NewInformer. controller-runtime
// hands it a list-watch over REST clients of a server that is not there; it
// builds the informer over the simulated cluster's store instead, so its
// list and watch see (and are held by) the cluster directly.
func (k *Kit) newInformer(_ toolscache.ListerWatcher, example runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	var lw toolscache.ListerWatcher
	store, err := k.listWatchFor(example)
	if err != nil {
		// controller-runtime mapped the kind before asking for the
		// informer, so this does not happen; should it, the informer
		// reports the error on every list instead of panicking.
		lw = failingListWatch{err: err}
	} else {
		lw = store
	}
	return k.makeInformer(lw, example, resync, indexers)
}

// listWatchFor returns the list-watch over the cluster's store for objects
// like example: typed, unstructured or metadata only.
func (k *Kit) listWatchFor(example runtime.Object) (*storeListWatch, error) {
	gvk, err := apiutil.GVKForObject(example, k.scheme)
	if err != nil {
		return nil, fmt.Errorf("simkit: informer for %T: %w", example, err)
	}
	mapping, err := k.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("simkit: informer for %v: %w", gvk, err)
	}
	lw := &storeListWatch{store: k.cluster.Tracker(), gvr: mapping.Resource, gvk: gvk}
	switch example.(type) {
	case *unstructured.Unstructured:
		lw.form = unstructuredForm
	case *metav1.PartialObjectMetadata:
		lw.form = metadataForm
	}
	return lw, nil
}

// objectForm is how an informer wants its objects.
type objectForm int

const (
	typedForm objectForm = iota // as the store holds them
	unstructuredForm
	metadataForm
)

// storeListWatch lists and watches one resource of the cluster's store,
// in every namespace.
type storeListWatch struct {
	store k8stesting.ObjectTracker
	gvr   schema.GroupVersionResource
	gvk   schema.GroupVersionKind
	form  objectForm
}

// IsWatchListSemanticsUnSupported makes client-go's reflector list and then
// watch, instead of asking for a streamed initial list the store does not
// serve.
func (l *storeListWatch) IsWatchListSemanticsUnSupported() bool { return true }

func (l *storeListWatch) List(opts metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), opts)
}

func (l *storeListWatch) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts)
}

// ListWithContext lists from the store, passing the resourceVersion on: the
// reflector's first list ("0") is what a held resource serves from the
// state its watches have seen.
func (l *storeListWatch) ListWithContext(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	list, err := l.store.List(l.gvr, l.gvk, "", metav1.ListOptions{ResourceVersion: opts.ResourceVersion})
	if err != nil {
		return nil, err
	}
	if l.form == typedForm {
		return list, nil
	}
	return l.convertList(list)
}

// WatchWithContext watches the store from the resourceVersion the reflector
// asks for; the reflector stops the watch.
func (l *storeListWatch) WatchWithContext(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := l.store.Watch(l.gvr, "", metav1.ListOptions{ResourceVersion: opts.ResourceVersion})
	if err != nil || l.form == typedForm {
		return w, err
	}
	return newConvertingWatch(w, l.convert), nil
}

// convert turns a stored object into the informer's form.
func (l *storeListWatch) convert(obj runtime.Object) (runtime.Object, error) {
	u, err := toUnstructured(obj, l.gvk)
	if err != nil || l.form == unstructuredForm {
		return u, err
	}
	partial := &metav1.PartialObjectMetadata{}
	if md, ok := u.Object["metadata"].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(md, &partial.ObjectMeta); err != nil {
			return nil, fmt.Errorf("simkit: metadata of %s: %w", l.gvk.Kind, err)
		}
	}
	partial.SetGroupVersionKind(l.gvk)
	return partial, nil
}

// convertList turns a stored list into the informer's form.
func (l *storeListWatch) convertList(list runtime.Object) (runtime.Object, error) {
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	rv := ""
	if lm, err := meta.ListAccessor(list); err == nil {
		rv = lm.GetResourceVersion()
	}
	listGVK := l.gvk.GroupVersion().WithKind(l.gvk.Kind + "List")
	if l.form == unstructuredForm {
		out := &unstructured.UnstructuredList{}
		out.SetGroupVersionKind(listGVK)
		out.SetResourceVersion(rv)
		for _, item := range items {
			u, err := l.convert(item)
			if err != nil {
				return nil, err
			}
			out.Items = append(out.Items, *u.(*unstructured.Unstructured))
		}
		return out, nil
	}
	out := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
	out.SetGroupVersionKind(listGVK)
	for _, item := range items {
		p, err := l.convert(item)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, *p.(*metav1.PartialObjectMetadata))
	}
	return out, nil
}

// toUnstructured returns obj as unstructured content of kind gvk.
func toUnstructured(obj runtime.Object, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		u = u.DeepCopy()
		u.SetGroupVersionKind(gvk)
		return u, nil
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("simkit: converting %T: %w", obj, err)
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// failingListWatch reports err on every call.
type failingListWatch struct{ err error }

func (f failingListWatch) List(metav1.ListOptions) (runtime.Object, error)   { return nil, f.err }
func (f failingListWatch) Watch(metav1.ListOptions) (watch.Interface, error) { return nil, f.err }
func (failingListWatch) IsWatchListSemanticsUnSupported() bool               { return true }
