package claim

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// DynamicPatcher is a Patcher over client-go's dynamic client for one
// resource, so any kind (custom resources included) can be claimed without a
// typed client. It implements PatchTyper, so a ref manager builds the patch
// body its patch type needs.
type DynamicPatcher struct {
	client    dynamic.Interface
	gvr       schema.GroupVersionResource
	patchType types.PatchType
}

// DynamicPatcherOption configures a DynamicPatcher.
type DynamicPatcherOption func(*DynamicPatcher)

// WithPatchType selects the patch type: types.MergePatchType (the default)
// works for every kind, custom resources included; types.StrategicMergePatchType
// works only for built-in kinds and sends exactly upstream's patches. Other
// types are refused by Patch.
func WithPatchType(pt types.PatchType) DynamicPatcherOption {
	return func(p *DynamicPatcher) { p.patchType = pt }
}

// NewDynamicPatcher returns a Patcher for the resource gvr. An empty namespace
// addresses a cluster-scoped object.
func NewDynamicPatcher(client dynamic.Interface, gvr schema.GroupVersionResource, opts ...DynamicPatcherOption) *DynamicPatcher {
	p := &DynamicPatcher{client: client, gvr: gvr, patchType: types.MergePatchType}
	for _, opt := range opts {
		opt(p)
	}
	return p
}

// PatchType reports the patch type the patcher sends.
func (p *DynamicPatcher) PatchType() types.PatchType { return p.patchType }

// Patch sends data to the named object.
func (p *DynamicPatcher) Patch(ctx context.Context, namespace, name string, data []byte) error {
	if p.patchType != types.MergePatchType && p.patchType != types.StrategicMergePatchType {
		return fmt.Errorf("claim: unsupported patch type %q", p.patchType)
	}
	var ri dynamic.ResourceInterface = p.client.Resource(p.gvr)
	if namespace != "" {
		ri = p.client.Resource(p.gvr).Namespace(namespace)
	}
	if _, err := ri.Patch(ctx, name, p.patchType, data, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("patch %s %s/%s: %w", p.gvr.String(), namespace, name, err)
	}
	return nil
}
