package childset

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// RecordingWriter is a Writer that tells the read-your-writes guard about
// every child the API server returns from a create or a patch, against the
// owner its controller reference names, so that owner's next sync waits
// until the child informer has seen the write. It is how a core learns of
// its own writes: the one writer it is given, wrapped, rather than a hook
// every writer must remember to call.
type RecordingWriter[C Object] struct {
	// Writer does the writes.
	Writer objectcontrol.Writer[C]
	// Guard records them; nil records nothing.
	Guard *consistency.Guard
	// Resource names the children's store to the guard.
	Resource schema.GroupResource
	// Enabled, when set, is asked at each write whether to record it (a
	// feature gate read per sync); nil records every write.
	Enabled func() bool
}

var _ objectcontrol.Writer[Object] = RecordingWriter[Object]{}

// Create implements objectcontrol.Writer.
func (w RecordingWriter[C]) Create(ctx context.Context, namespace string, obj C) (C, error) {
	created, err := w.Writer.Create(ctx, namespace, obj)
	if err == nil {
		w.record(created)
	}
	return created, err
}

// Delete implements objectcontrol.Writer. A deletion is not recorded: the
// expectations wait for it.
func (w RecordingWriter[C]) Delete(ctx context.Context, namespace, name string) error {
	return w.Writer.Delete(ctx, namespace, name)
}

// Patch implements objectcontrol.Writer. An adoption is recorded against its
// new controller; a release leaves no controller to record against.
func (w RecordingWriter[C]) Patch(ctx context.Context, namespace, name string, patchType types.PatchType, data []byte) (C, error) {
	patched, err := w.Writer.Patch(ctx, namespace, name, patchType, data)
	if err == nil {
		w.record(patched)
	}
	return patched, err
}

func (w RecordingWriter[C]) record(obj C) {
	if w.Guard == nil || isNil(obj) || (w.Enabled != nil && !w.Enabled()) {
		return
	}
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil {
		return
	}
	w.Guard.WroteAt(expectations.OwnerKeyForRef(obj.GetNamespace(), ref), w.Resource, obj.GetResourceVersion())
}
