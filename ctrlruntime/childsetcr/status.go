package childsetcr

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlkit/ctrlkit/childset"
)

// StatusSetter is implemented by a Spec (without Get) whose owners carry
// the counts in their status: SetStatus copies what a sync saw into owner,
// a private copy, and the host writes it to the status subresource when it
// changed, retrying once on a fresh read after a failure (a conflict), as
// podsetcr's Describer.SetStatus is written. st.Fields(stored) lays st out
// as a Deployment's status, the collision count by the rule a rolling owner
// needs (childset.CollisionCountSpec reads it back); a Spec whose owners'
// status has that layout can instead point Describe's Fields.Status at it,
// and write no SetStatus. A Spec that writes its status itself implements
// childset.StatusSpec instead, which wins.
type StatusSetter[O client.Object] interface {
	SetStatus(owner O, st childset.Status)
}
