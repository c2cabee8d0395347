package childset

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/claim"
	"github.com/ctrlkit/ctrlkit/internal/writedeadline"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// deadlineWriter runs every write of the core within the write timeout
// (WithWriteTimeout), by the rule podset follows too: the write runs on a
// goroutine of its own and the sync stops waiting at the deadline, even if
// the writer ignores its context. A write abandoned that way returns an error
// wrapping context.DeadlineExceeded; a create may still have happened.
type deadlineWriter[C Object] struct {
	w       objectcontrol.Interface[C]
	timeout time.Duration
}

var (
	_ objectcontrol.Interface[Object] = deadlineWriter[Object]{}
	_ objectPatcher[Object]           = deadlineWriter[Object]{}
	_ claim.PatchTyper                = deadlineWriter[Object]{}
)

func (d deadlineWriter[C]) Create(ctx context.Context, namespace string, obj C, owner runtime.Object, controllerRef *metav1.OwnerReference) (C, error) {
	return writedeadline.Call(ctx, d.timeout, "creating a child in "+namespace, func(ctx context.Context) (C, error) {
		return d.w.Create(ctx, namespace, obj, owner, controllerRef)
	})
}

func (d deadlineWriter[C]) Delete(ctx context.Context, namespace, name string, owner runtime.Object) error {
	return writedeadline.Do(ctx, d.timeout, "deleting "+namespace+"/"+name, func(ctx context.Context) error {
		return d.w.Delete(ctx, namespace, name, owner)
	})
}

// deleteAll deletes victims in parallel, one goroutine each, and returns
// each delete's error in their order. The deletes share one deadline, the
// timeout from the moment they all start (writedeadline.Each), as podset's
// do: a context and a waiting goroutine per delete would cost more than
// many a delete does. A delete still unanswered then is abandoned with a
// deadline error.
func (d deadlineWriter[C]) deleteAll(ctx context.Context, victims []C, owner runtime.Object) []error {
	return writedeadline.Each(ctx, d.timeout, len(victims),
		func(i int) string { return "deleting " + victims[i].GetNamespace() + "/" + victims[i].GetName() },
		func(ctx context.Context, i int) error {
			return d.w.Delete(ctx, victims[i].GetNamespace(), victims[i].GetName(), owner)
		})
}

// call runs a write of the caller's within the write timeout, as every
// other write of the core.
func (d deadlineWriter[C]) call(ctx context.Context, what string, write func(ctx context.Context) (C, error)) (C, error) {
	return writedeadline.Call(ctx, d.timeout, what, write)
}

func (d deadlineWriter[C]) Patch(ctx context.Context, namespace, name string, data []byte) error {
	return writedeadline.Do(ctx, d.timeout, "patching "+namespace+"/"+name, func(ctx context.Context) error {
		return d.w.Patch(ctx, namespace, name, data)
	})
}

// PatchObject is Patch returning what the writer patched when it can tell
// (objectcontrol.Control can), else the zero C, which records nothing.
func (d deadlineWriter[C]) PatchObject(ctx context.Context, namespace, name string, data []byte) (C, error) {
	op, ok := d.w.(objectPatcher[C])
	if !ok {
		var zero C
		return zero, d.Patch(ctx, namespace, name, data)
	}
	return writedeadline.Call(ctx, d.timeout, "patching "+namespace+"/"+name, func(ctx context.Context) (C, error) {
		return op.PatchObject(ctx, namespace, name, data)
	})
}

// PatchType keeps the writer's patch format, or the claim's default.
func (d deadlineWriter[C]) PatchType() types.PatchType {
	if pt, ok := d.w.(claim.PatchTyper); ok {
		return pt.PatchType()
	}
	return types.StrategicMergePatchType
}
