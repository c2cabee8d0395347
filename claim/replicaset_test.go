package claim

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

func newDeployment(ns string, uid types.UID, deleting bool) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, UID: uid}}
	if deleting {
		now := metav1.Now()
		d.DeletionTimestamp = &now
	}
	return d
}

func newRS(name, ns string, lbls map[string]string, owner metav1.Object) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: lbls, UID: types.UID("uid-" + name)}}
	if owner != nil {
		rs.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, deployKind)}
	}
	return rs
}

// TestReplicaSetsClaimedByDeployment drives the generic manager through the
// typed fake clientset, which applies the strategic-merge patches, and checks
// the stored ReplicaSets afterwards.
func TestReplicaSetsClaimedByDeployment(t *testing.T) {
	ctx := context.Background()
	d := newDeployment("default", "dep-uid", false)
	other := newDeployment("default", "other-uid", false)
	foreign := &appsv1.ReplicaSet{}
	foreign.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "cm-uid"}})
	sets := []*appsv1.ReplicaSet{
		newRS("owned-match", "default", productionLabel, d),
		newRS("owned-nomatch", "default", testingLabel, d),
		newRS("orphan-match", "default", productionLabel, nil),
		newRS("orphan-nomatch", "default", testingLabel, nil),
		newRS("other-owner", "default", productionLabel, other),
		newRS("orphan-other-ns", "elsewhere", productionLabel, nil),
	}
	// An orphan with a non-controller owner keeps it after adoption.
	withOwner := newRS("orphan-with-owner", "default", productionLabel, nil)
	withOwner.OwnerReferences = foreign.OwnerReferences
	sets = append(sets, withOwner)

	objs := make([]runtime.Object, len(sets))
	for i, rs := range sets {
		objs[i] = rs.DeepCopy()
	}
	client := fake.NewClientset(objs...)
	m := NewReplicaSetControllerRefManager(NewReplicaSetPatcher(client), d, productionSelector, deployKind, nil)
	claimed, err := m.ClaimReplicaSets(ctx, sets)
	require.NoError(t, err)
	var names []string
	for _, rs := range claimed {
		names = append(names, rs.Name)
	}
	assert.Equal(t, []string{"owned-match", "orphan-match", "orphan-with-owner"}, names)

	ctrlOf := func(name, ns string) *metav1.OwnerReference {
		rs, err := client.AppsV1().ReplicaSets(ns).Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		return metav1.GetControllerOf(rs)
	}
	assert.Equal(t, types.UID("dep-uid"), ctrlOf("orphan-match", "default").UID, "adopted")
	assert.Equal(t, "Deployment", ctrlOf("orphan-match", "default").Kind)
	assert.Nil(t, ctrlOf("owned-nomatch", "default"), "released")
	assert.Nil(t, ctrlOf("orphan-nomatch", "default"))
	assert.Nil(t, ctrlOf("orphan-other-ns", "elsewhere"))
	assert.Equal(t, types.UID("other-uid"), ctrlOf("other-owner", "default").UID)
	kept, err := client.AppsV1().ReplicaSets("default").Get(ctx, "orphan-with-owner", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Len(t, kept.OwnerReferences, 2, "strategic merge keeps the other owner")

	var patches int
	for _, a := range client.Actions() {
		if a.GetVerb() == "patch" {
			patches++
			assert.Equal(t, types.StrategicMergePatchType, a.(clienttesting.PatchAction).GetPatchType())
		}
	}
	assert.Equal(t, 3, patches)
}

func TestReplicaSetManagerErrors(t *testing.T) {
	ctx := context.Background()
	d := newDeployment("default", "dep-uid", false)
	t.Run("can adopt refusal names the kind", func(t *testing.T) {
		m := NewReplicaSetControllerRefManager(PatcherFunc(func(context.Context, string, string, []byte) error { return nil }),
			d, labels.Everything(), deployKind, func(context.Context) error { return errors.New("gone") })
		err := m.AdoptReplicaSet(ctx, newRS("rs", "default", productionLabel, nil))
		assert.EqualError(t, err, "can't adopt ReplicaSet default/rs (uid-rs): gone")
	})
	t.Run("release ignores NotFound", func(t *testing.T) {
		client := fake.NewClientset()
		m := NewReplicaSetControllerRefManager(NewReplicaSetPatcher(client), d, labels.Everything(), deployKind, nil)
		assert.NoError(t, m.ReleaseReplicaSet(ctx, newRS("missing", "default", testingLabel, d)))
	})
	t.Run("adopt of a missing ReplicaSet is not claimed and not an error", func(t *testing.T) {
		client := fake.NewClientset()
		m := NewReplicaSetControllerRefManager(NewReplicaSetPatcher(client), d, labels.Everything(), deployKind, nil)
		claimed, err := m.ClaimReplicaSets(ctx, []*appsv1.ReplicaSet{newRS("missing", "default", productionLabel, nil)})
		assert.NoError(t, err)
		assert.Empty(t, claimed)
	})
	t.Run("deleting deployment keeps what it owns", func(t *testing.T) {
		dd := newDeployment("default", "dep-uid", true)
		var patches int
		m := NewReplicaSetControllerRefManager(PatcherFunc(func(context.Context, string, string, []byte) error { patches++; return nil }),
			dd, productionSelector, deployKind, nil)
		claimed, err := m.ClaimReplicaSets(ctx, []*appsv1.ReplicaSet{
			newRS("a", "default", productionLabel, dd), newRS("b", "default", testingLabel, dd), newRS("c", "default", productionLabel, nil),
		})
		require.NoError(t, err)
		require.Len(t, claimed, 1)
		assert.Equal(t, "a", claimed[0].Name)
		assert.Zero(t, patches)
	})
}
