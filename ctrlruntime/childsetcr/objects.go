package childsetcr

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// newObject returns a new, empty T: T must be a pointer to a struct (a
// typed API object, or unstructured.Unstructured), which is what the
// manager's cache and client read and write. gvk, when not empty, is set on
// it, which an unstructured object needs for the cache to know its kind.
func newObject[T client.Object](gvk schema.GroupVersionKind) (T, error) {
	var zero T
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return zero, fmt.Errorf("childsetcr: %v is not a pointer to an API struct", t)
	}
	obj := reflect.New(t.Elem()).Interface().(T)
	if !gvk.Empty() {
		obj.GetObjectKind().SetGroupVersionKind(gvk)
	}
	return obj, nil
}

// listFor returns an empty list of obj's kind ("<Kind>List" in scheme), to
// list objects of that kind from the cache.
func listFor(obj client.Object, scheme *runtime.Scheme) (client.ObjectList, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return nil, fmt.Errorf("childsetcr: the kind of %T: %w", obj, err)
	}
	listGVK := gvk.GroupVersion().WithKind(gvk.Kind + "List")
	newList, err := scheme.New(listGVK)
	if err != nil {
		return nil, fmt.Errorf("childsetcr: the list kind of %s: %w", gvk, err)
	}
	list, ok := newList.(client.ObjectList)
	if !ok {
		return nil, fmt.Errorf("childsetcr: %s is a %T, not a list", listGVK, newList)
	}
	if _, isUnstructured := newList.(runtime.Unstructured); isUnstructured {
		list.GetObjectKind().SetGroupVersionKind(listGVK)
	}
	return list, nil
}

// extract returns the items of list as Ts; an item of another type is an
// error, never a panic.
func extract[T client.Object](list client.ObjectList) ([]T, error) {
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("childsetcr: reading a %T: %w", list, err)
	}
	out := make([]T, 0, len(items))
	for _, item := range items {
		obj, ok := item.(T)
		if !ok {
			var zero T
			return nil, fmt.Errorf("childsetcr: a %T holds a %T, not a %T", list, item, zero)
		}
		out = append(out, obj)
	}
	return out, nil
}
