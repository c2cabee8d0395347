package childsetcr

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/ctrlkit/ctrlkit/childset"
)

type rsOnly struct{}

func (rsOnly) GroupVersionKind() schema.GroupVersionKind {
	return appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
}
func (rsOnly) Replicas(*appsv1.ReplicaSet) int32                    { return 1 }
func (rsOnly) Selector(*appsv1.ReplicaSet) (labels.Selector, error) { return labels.Everything(), nil }
func (rsOnly) NewChild(*appsv1.ReplicaSet) (*corev1.Pod, error)     { return &corev1.Pod{}, nil }

// The spec SetupWithManager builds reads owners from the cache and, for the
// core's check before an adoption, from the live reader.
func TestLiveSpecReadsTheLiveReader(t *testing.T) {
	cached := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "old"}}
	live := cached.DeepCopy()
	live.UID = "new"
	spec := liveSpec[*appsv1.ReplicaSet, *corev1.Pod]{
		cachedSpec[*appsv1.ReplicaSet, *corev1.Pod]{Spec: rsOnly{}, reader: fake.NewClientBuilder().WithObjects(cached).Build()},
		fake.NewClientBuilder().WithObjects(live).Build(),
	}
	var _ childset.LiveReader[*appsv1.ReplicaSet] = spec
	got, err := spec.Get("ns", "web")
	require.NoError(t, err)
	assert.EqualValues(t, "old", got.UID)
	got, err = spec.GetLive(context.Background(), "ns", "web")
	require.NoError(t, err)
	assert.EqualValues(t, "new", got.UID)
	_, err = spec.GetLive(context.Background(), "ns", "gone")
	assert.True(t, apierrors.IsNotFound(err))
}
