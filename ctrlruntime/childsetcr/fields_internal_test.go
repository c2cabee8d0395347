package childsetcr

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/ctrlkit/ctrlkit/childset"
)

// rsDescribed hands over a ReplicaSet's fields at once; the status it
// describes is the test's.
type rsDescribed struct{ fields childset.Fields }

func (d rsDescribed) Describe(*appsv1.ReplicaSet) childset.Fields               { return d.fields }
func (rsDescribed) NewChild(*appsv1.ReplicaSet) (*corev1.Pod, error)            { return &corev1.Pod{}, nil }
func (d rsDescribedRolling) Describe(*appsv1.ReplicaSet) childset.RolloutFields { return d.fields }

type rsDescribedRolling struct {
	rsDescribed
	fields childset.RolloutFields
}

type rsNewChildOnly struct{}

func (rsNewChildOnly) NewChild(*appsv1.ReplicaSet) (*corev1.Pod, error) { return &corev1.Pod{}, nil }

// A Describer's fields read with the defaults childset.Fields documents,
// and a Describe returning RolloutFields is what makes the Spec roll out.
func TestDescribedFieldsDefaults(t *testing.T) {
	fields, rolls, err := fieldsOf[*appsv1.ReplicaSet, *corev1.Pod](rsDescribed{})
	require.NoError(t, err)
	assert.False(t, rolls)
	assert.EqualValues(t, 1, fields.Replicas(nil), "nil replicas mean 1")
	sel, err := fields.Selector(nil)
	require.NoError(t, err)
	assert.False(t, sel.Matches(labels.Set{"a": "b"}), "a nil selector selects nothing")
	assert.Nil(t, fields.CollisionCount(nil), "no status, no count")
	counts, conds := fields.StoredProgress(nil)
	assert.Zero(t, counts)
	assert.Nil(t, conds)
	_, on := fields.RollingUpdate(nil)
	assert.False(t, on)
	assert.EqualValues(t, childset.DefaultRevisionHistoryLimit, fields.RevisionHistoryLimit(nil))

	stored := &childset.StatusFields{Replicas: 4, UpdatedReplicas: 2, CollisionCount: ptr.To[int32](6),
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing}}}
	ru := &childset.RollingUpdate{Partition: 1}
	spec := rsDescribedRolling{fields: childset.RolloutFields{
		Fields:        childset.Fields{Replicas: ptr.To[int32](3), MinReadySeconds: 9, Status: stored, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}},
		RollingUpdate: ru, RevisionHistoryLimit: ptr.To[int32](2), Paused: true, ProgressDeadlineSeconds: ptr.To[int32](60),
	}}
	fields, rolls, err = fieldsOf[*appsv1.ReplicaSet, *corev1.Pod](spec)
	require.NoError(t, err)
	assert.True(t, rolls)
	assert.EqualValues(t, 3, fields.Replicas(nil))
	assert.EqualValues(t, 9, fields.MinReadySeconds(nil))
	sel, err = fields.Selector(nil)
	require.NoError(t, err)
	assert.Equal(t, "a=b", sel.String())
	got, on := fields.RollingUpdate(nil)
	assert.True(t, on)
	assert.Equal(t, *ru, got)
	assert.EqualValues(t, 2, fields.RevisionHistoryLimit(nil))
	assert.EqualValues(t, 6, *fields.CollisionCount(nil))
	assert.True(t, fields.Paused(nil))
	assert.EqualValues(t, 60, *fields.ProgressDeadlineSeconds(nil))
	counts, conds = fields.StoredProgress(nil)
	assert.EqualValues(t, 4, counts.Replicas)
	assert.EqualValues(t, 2, counts.UpdatedReplicas)
	assert.Len(t, conds, 1)
	assert.Same(t, stored, fields.statusFields(nil))

	full, err := completeSpec[*appsv1.ReplicaSet, *corev1.Pod](spec, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), fake.NewClientBuilder().Build(), nil, nil)
	require.NoError(t, err)
	assert.Implements(t, (*childset.RolloutSpec[*appsv1.ReplicaSet])(nil), full)
	full, err = completeSpec[*appsv1.ReplicaSet, *corev1.Pod](rsDescribed{}, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), fake.NewClientBuilder().Build(), nil, nil)
	require.NoError(t, err)
	_, rollsOut := full.(childset.RolloutSpec[*appsv1.ReplicaSet])
	assert.False(t, rollsOut, "a Describer of Fields does not roll out, so needs no revisions")
}

// A Spec that gives its fields in neither shape is refused when the
// controller is built, not at its first sync.
func TestSpecWithoutFieldsIsRefused(t *testing.T) {
	_, _, err := fieldsOf[*appsv1.ReplicaSet, *corev1.Pod](rsNewChildOnly{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Describe")
}

// A typed owner's kind comes from the scheme when the Spec does not say
// it; an unstructured owner's must be said.
func TestOwnerKind(t *testing.T) {
	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	gvk, err := ownerKind[*appsv1.ReplicaSet, *corev1.Pod](rsDescribed{}, scheme)
	require.NoError(t, err)
	assert.Equal(t, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), gvk)
	gvk, err = ownerKind[*appsv1.ReplicaSet, *corev1.Pod](rsOnly{}, runtime.NewScheme())
	require.NoError(t, err, "the Spec's own kind needs no scheme")
	assert.Equal(t, "ReplicaSet", gvk.Kind)
	_, err = ownerKind[*unstructured.Unstructured, *corev1.Pod](unstructuredNewChild{}, scheme)
	require.Error(t, err)
	_, err = ownerKind[*appsv1.ReplicaSet, *corev1.Pod](rsDescribed{}, runtime.NewScheme())
	require.Error(t, err, "a kind the scheme lacks")
}

type unstructuredNewChild struct{}

func (unstructuredNewChild) NewChild(*unstructured.Unstructured) (*corev1.Pod, error) {
	return &corev1.Pod{}, nil
}
