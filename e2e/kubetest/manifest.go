package kubetest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
)

// ApplyManifestFile is ApplyManifest with the manifest read from path.
func (e *Env) ApplyManifestFile(ctx context.Context, path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("kubetest: %w", err)
	}
	return e.ApplyManifest(ctx, data)
}

// ApplyManifest creates every object of a multi-document YAML (or JSON)
// manifest with the admin identity, in document order, and returns them as
// the apiserver stored them. Any kind the apiserver serves works, custom
// resources included once their CRD is established. An object that exists
// already is replaced by the manifest's version. A namespaced object's
// namespace is created first if it does not exist (the manifests a
// controller ships usually assume it does). Empty documents are skipped.
func (e *Env) ApplyManifest(ctx context.Context, manifest []byte) ([]*unstructured.Unstructured, error) {
	if e == nil || e.Config == nil {
		return nil, errors.New("kubetest: ApplyManifest on an Env that is not running")
	}
	objs, err := decodeManifest(manifest)
	if err != nil {
		return nil, err
	}
	cfg, closeIdle, err := e.ClientConfig(nil)
	if err != nil {
		return nil, err
	}
	defer closeIdle()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubetest: %w", err)
	}
	typed, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubetest: %w", err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubetest: %w", err)
	}
	groups, err := restmapper.GetAPIGroupResources(disco)
	if err != nil {
		return nil, fmt.Errorf("kubetest: discover the apiserver's resources: %w", err)
	}
	mapper := restmapper.NewDiscoveryRESTMapper(groups)

	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return out, fmt.Errorf("kubetest: %s %q: %w", gvk, obj.GetName(), err)
		}
		var res dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			if obj.GetNamespace() == "" {
				obj.SetNamespace(metav1.NamespaceDefault)
			}
			if err := ensureNamespace(ctx, typed, obj.GetNamespace()); err != nil {
				return out, err
			}
			res = dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace())
		}
		created, err := res.Create(ctx, obj, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			created, err = replace(ctx, res, obj)
		}
		if err != nil {
			return out, fmt.Errorf("kubetest: apply %s %s/%s: %w", gvk.Kind, obj.GetNamespace(), obj.GetName(), err)
		}
		out = append(out, created)
	}
	return out, nil
}

func replace(ctx context.Context, res dynamic.ResourceInterface, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	cur, err := res.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	obj = obj.DeepCopy()
	obj.SetResourceVersion(cur.GetResourceVersion())
	return res.Update(ctx, obj, metav1.UpdateOptions{})
}

func ensureNamespace(ctx context.Context, client kubernetes.Interface, name string) error {
	_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("kubetest: create namespace %s: %w", name, err)
	}
	return nil
}

// decodeManifest splits a multi-document YAML stream and decodes each
// document into an unstructured object.
func decodeManifest(manifest []byte) ([]*unstructured.Unstructured, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifest)))
	var objs []*unstructured.Unstructured
	for i := 0; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("kubetest: manifest document %d: %w", i, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &obj.Object); err != nil {
			return nil, fmt.Errorf("kubetest: manifest document %d: %w", i, err)
		}
		if len(obj.Object) == 0 {
			continue // only comments
		}
		if obj.GetKind() == "" || obj.GetAPIVersion() == "" {
			return nil, fmt.Errorf("kubetest: manifest document %d has no apiVersion or kind", i)
		}
		objs = append(objs, obj)
	}
}
