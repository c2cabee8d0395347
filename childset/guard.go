package childset

import (
	"context"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/claim"
)

// LiveReader is implemented by a Spec that can read an owner from the API
// server rather than the cache. The core then checks the live owner before
// it adopts a child, as upstream does; see Reconciler.Reconcile.
type LiveReader[O Object] interface {
	GetLive(ctx context.Context, namespace, name string) (O, error)
}

// objectPatcher is a writer that returns what it patched
// (objectcontrol.Control does), so an adoption can be recorded.
type objectPatcher[C Object] interface {
	PatchObject(ctx context.Context, namespace, name string, data []byte) (C, error)
}

// wrote records a child the API server returned for the owner behind
// ownerKey, for the read-your-writes guard.
func (r *Reconciler[O, C]) wrote(ownerKey string, obj C) {
	if !r.guardOn() || isNil(obj) {
		return
	}
	r.cfg.guard.WroteAt(ownerKey, r.childResource, obj.GetResourceVersion())
}

// patcher is what the claim patches through: the writer itself, or with the
// guard on, the writer recording each adoption it can see the answer of.
func (r *Reconciler[O, C]) patcher(ownerKey string) claim.Patcher {
	if !r.guardOn() {
		return r.writer
	}
	return recordingPatcher[O, C]{r: r, ownerKey: ownerKey}
}

type recordingPatcher[O Object, C Object] struct {
	r        *Reconciler[O, C]
	ownerKey string
}

func (p recordingPatcher[O, C]) Patch(ctx context.Context, namespace, name string, data []byte) error {
	// A writer that cannot tell what it patched gives the zero C, which
	// records nothing.
	patched, err := p.r.writer.PatchObject(ctx, namespace, name, data)
	if err == nil {
		p.r.wrote(p.ownerKey, patched)
	}
	return err
}

// PatchType keeps the writer's patch format.
func (p recordingPatcher[O, C]) PatchType() types.PatchType { return p.r.writer.PatchType() }
