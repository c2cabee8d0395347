package podsetcr

import (
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/shardcr"
	"github.com/ctrlkit/ctrlkit/examples/podgroup"
	"github.com/ctrlkit/ctrlkit/shard"
)

// A sharded controller registers for typed and unstructured owners, and
// lists its owners for the resync in the form its watches use.
func TestCompleteWithSharding(t *testing.T) {
	s := newScheme(t)
	member, err := shardcr.NewMember(fake.NewClientset().CoordinationV1(), "kube-system", "podgroups", "replica-0")
	require.NoError(t, err)
	sharding := shardcr.New(member, shard.KeyUID)

	_, err = SetupWithManager[*unstructured.Unstructured](newManager(t, s), podgroup.Kind{}, WithName("sharded-podgroup"), WithSharding(sharding))
	require.NoError(t, err)
	_, err = SetupWithManager[*appsv1.ReplicaSet](newManager(t, s), replicaSetDescriber{}, WithName("sharded-rs"), WithSharding(sharding))
	require.NoError(t, err)

}
