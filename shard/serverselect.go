package shard

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Server-side selection rides on two API fields that arrived in
// k8s.io/apimachinery v0.36 (Kubernetes 1.36): ListOptions.ShardSelector,
// the request, and ListMeta.ShardInfo, the server's echo. Naming them in
// code would make ctrlkit require v0.36 and lift every importer to it, so
// they are found by name, once, when the package loads. Built against v0.34
// or v0.35 they are absent: nothing is sent, no echo is ever seen, and every
// share is filtered on the client, which keeps the informer's store exactly
// the share; only the server's saving (it still sends every object) is lost.
var (
	listSelectorField = fieldPath(reflect.TypeFor[metav1.ListOptions](), "ShardSelector", reflect.String)
	listShardInfo     = fieldPath(reflect.TypeFor[metav1.ListMeta](), "ShardInfo", reflect.Pointer)
	shardInfoSelector = shardInfoSelectorField()
)

// fieldPath is the index of the field name of kind k directly in t, nil when
// t has no such field.
func fieldPath(t reflect.Type, name string, k reflect.Kind) []int {
	f, ok := t.FieldByName(name)
	if !ok || len(f.Index) != 1 || f.Type.Kind() != k {
		return nil
	}
	return f.Index
}

// shardInfoSelectorField is the index of Selector, a string, in the struct
// ListMeta.ShardInfo points to; nil when either is missing.
func shardInfoSelectorField() []int {
	if listShardInfo == nil {
		return nil
	}
	t := reflect.TypeFor[metav1.ListMeta]().Field(listShardInfo[0]).Type
	if t.Elem().Kind() != reflect.Struct {
		return nil
	}
	f, ok := t.Elem().FieldByName("Selector")
	if !ok || f.Type.Kind() != reflect.String {
		return nil
	}
	return f.Index
}

// ServerSelection reports whether the Kubernetes libraries this program is
// built with can ask the API server to filter by shard: true from
// k8s.io/apimachinery v0.36 on. When false, SetListSelector sends nothing
// and ServerFiltered is always false, so ShareListWatch and every host
// filter on the client. The server must also have the ShardedListAndWatch
// gate on; a server without it ignores the selector and the client filters
// all the same.
func ServerSelection() bool {
	return listSelectorField != nil && shardInfoSelector != nil
}

// SetListSelector sets opts.ShardSelector to selector ("" clears it) and
// reports whether it could: false, with opts unchanged, when the libraries
// predate the field (see ServerSelection).
func SetListSelector(opts *metav1.ListOptions, selector string) bool {
	if opts == nil {
		panic("shard: SetListSelector: nil ListOptions")
	}
	if !ServerSelection() {
		return false
	}
	reflect.ValueOf(opts).Elem().Field(listSelectorField[0]).SetString(selector)
	return true
}

// ListSelector returns opts.ShardSelector, "" when unset or when the
// libraries predate the field.
func ListSelector(opts metav1.ListOptions) string {
	if !ServerSelection() {
		return ""
	}
	return reflect.ValueOf(opts).Field(listSelectorField[0]).String()
}

// EchoedSelector returns the shard selector a list answer's ShardInfo
// echoes, typed or unstructured; ok is false when the answer has none (the
// server did not filter, or the libraries predate the field and dropped it
// while decoding a typed list).
func EchoedSelector(list runtime.Object) (selector string, ok bool) {
	if u, isU := list.(*unstructured.UnstructuredList); isU {
		sel, found, err := unstructured.NestedString(u.Object, "metadata", "shardInfo", "selector")
		return sel, err == nil && found
	}
	if !ServerSelection() {
		return "", false
	}
	acc, isAcc := list.(metav1.ListMetaAccessor)
	if !isAcc {
		return "", false
	}
	lm, isLM := acc.GetListMeta().(*metav1.ListMeta)
	if !isLM || lm == nil {
		return "", false
	}
	info := reflect.ValueOf(lm).Elem().Field(listShardInfo[0])
	if info.IsNil() {
		return "", false
	}
	return info.Elem().Field(shardInfoSelector[0]).String(), true
}

// SetEchoedSelector writes selector into a list answer's ShardInfo, as an API
// server that filtered by it does: for fakes and simulated servers. It
// reports false, with list unchanged, for a typed list when the libraries
// predate the field, and for an object that is not a list.
func SetEchoedSelector(list runtime.Object, selector string) bool {
	if u, isU := list.(*unstructured.UnstructuredList); isU {
		if u.Object == nil {
			u.Object = map[string]any{}
		}
		return unstructured.SetNestedField(u.Object, selector, "metadata", "shardInfo", "selector") == nil
	}
	if !ServerSelection() {
		return false
	}
	acc, isAcc := list.(metav1.ListMetaAccessor)
	if !isAcc {
		return false
	}
	lm, isLM := acc.GetListMeta().(*metav1.ListMeta)
	if !isLM || lm == nil {
		return false
	}
	info := reflect.ValueOf(lm).Elem().Field(listShardInfo[0])
	v := reflect.New(info.Type().Elem())
	v.Elem().Field(shardInfoSelector[0]).SetString(selector)
	info.Set(v)
	return true
}
