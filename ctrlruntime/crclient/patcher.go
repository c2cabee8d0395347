package crclient

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlkit/ctrlkit/claim"
)

// Patcher is a claim.Patcher for objects of one kind over a
// controller-runtime client, for claim's ref managers. It also tells the
// manager which patch body to build (claim.PatchTyper): custom resources
// refuse strategic-merge patches and need JSON merge patches.
type Patcher struct {
	client    client.Client
	gvk       schema.GroupVersionKind
	patchType types.PatchType
}

var (
	_ claim.Patcher    = (*Patcher)(nil)
	_ claim.PatchTyper = (*Patcher)(nil)
)

// NewPatcher returns a Patcher for objects of kind gvk sending patchType
// patches: types.StrategicMergePatchType for built-in kinds,
// types.MergePatchType for custom resources. Any other patch type, or an
// empty kind, is an error; c must not be nil.
func NewPatcher(c client.Client, gvk schema.GroupVersionKind, patchType types.PatchType) (*Patcher, error) {
	if gvk.Kind == "" || gvk.Version == "" {
		return nil, fmt.Errorf("crclient: patcher needs a version and a kind, got %q", gvk.String())
	}
	switch patchType {
	case types.StrategicMergePatchType, types.MergePatchType:
	default:
		return nil, fmt.Errorf("crclient: unsupported patch type %q for claim patches", patchType)
	}
	return &Patcher{client: c, gvk: gvk, patchType: patchType}, nil
}

// PatchType returns the patch type the Patcher sends.
func (p *Patcher) PatchType() types.PatchType { return p.patchType }

// Patch sends data to the named object.
func (p *Patcher) Patch(ctx context.Context, namespace, name string, data []byte) error {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(p.gvk)
	obj.SetNamespace(namespace)
	obj.SetName(name)
	if err := p.client.Patch(ctx, obj, client.RawPatch(p.patchType, data)); err != nil {
		return fmt.Errorf("patching %s %s/%s: %w", p.gvk.Kind, namespace, name, err)
	}
	return nil
}
