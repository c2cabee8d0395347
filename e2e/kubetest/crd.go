package kubetest

import (
	"context"
	"errors"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
)

// InstallCRDs creates the CustomResourceDefinitions (replacing any that exist
// under the same name) and returns once the apiserver reports every one of
// them Established, that is, serving its resource. ctx bounds the wait.
func (e *Env) InstallCRDs(ctx context.Context, crds ...*apiextensionsv1.CustomResourceDefinition) error {
	if e == nil || e.Config == nil {
		return errors.New("kubetest: InstallCRDs on an Env that is not running")
	}
	cfg, closeIdle, err := e.ClientConfig(nil)
	if err != nil {
		return err
	}
	defer closeIdle()
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("kubetest: %w", err)
	}
	api := client.ApiextensionsV1().CustomResourceDefinitions()
	for _, crd := range crds {
		if crd == nil {
			return errors.New("kubetest: InstallCRDs given a nil CustomResourceDefinition")
		}
		_, err := api.Create(ctx, crd, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			var cur *apiextensionsv1.CustomResourceDefinition
			if cur, err = api.Get(ctx, crd.Name, metav1.GetOptions{}); err == nil {
				upd := crd.DeepCopy()
				upd.ResourceVersion = cur.ResourceVersion
				_, err = api.Update(ctx, upd, metav1.UpdateOptions{})
			}
		}
		if err != nil {
			return fmt.Errorf("kubetest: install CRD %s: %w", crd.Name, err)
		}
	}
	for _, crd := range crds {
		var last *apiextensionsv1.CustomResourceDefinition
		err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			cur, err := api.Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil {
				return false, nil // not there yet or a transient error: keep polling until ctx ends
			}
			last = cur
			return crdCondition(cur, apiextensionsv1.Established) && crdCondition(cur, apiextensionsv1.NamesAccepted), nil
		})
		if err != nil {
			status := "never read"
			if last != nil {
				status = fmt.Sprintf("%+v", last.Status.Conditions)
			}
			return fmt.Errorf("kubetest: CRD %s not established (conditions %s): %w", crd.Name, status, err)
		}
	}
	return nil
}

// InstallCRDsFromYAML decodes every CustomResourceDefinition in a
// multi-document YAML manifest and installs them with InstallCRDs. A document
// of any other kind is an error.
func (e *Env) InstallCRDsFromYAML(ctx context.Context, manifest []byte) error {
	objs, err := decodeManifest(manifest)
	if err != nil {
		return err
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(objs))
	for _, obj := range objs {
		if gvk := obj.GroupVersionKind(); gvk != apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition") {
			return fmt.Errorf("kubetest: %s %q is not an apiextensions.k8s.io/v1 CustomResourceDefinition", gvk, obj.GetName())
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, crd); err != nil {
			return fmt.Errorf("kubetest: CRD %q: %w", obj.GetName(), err)
		}
		crds = append(crds, crd)
	}
	return e.InstallCRDs(ctx, crds...)
}

func crdCondition(crd *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == t {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}
