package childsetcr

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlkit/ctrlkit/childset"
)

// StatusSetter is implemented by a Spec (without Get) whose owners carry
// the counts in their status: SetStatus copies what a sync saw into owner,
// a private copy, and the host writes it to the status subresource when it
// changed, retrying once on a fresh read after a failure (a conflict), as
// podsetcr's Describer.SetStatus is written. Copy st.CollisionCount too
// when the owner rolls out and has such a field (childset.CollisionCountSpec
// reads it back). A Spec that writes its status itself implements
// childset.StatusSpec instead, which wins.
type StatusSetter[O client.Object] interface {
	SetStatus(owner O, st childset.Status)
}
