package claim

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// TestGenerateDeleteOwnerRefStrategicMergeBytes is upstream's
// TestGeneratePatchBytesForDelete: exact bytes.
func TestGenerateDeleteOwnerRefStrategicMergeBytes(t *testing.T) {
	tests := []struct {
		name       string
		owners     []types.UID
		dependent  types.UID
		finalizers []string
		want       string
	}{
		{name: "check the structure of patch bytes", owners: []types.UID{"ss1"}, dependent: "ss2",
			want: `{"metadata":{"uid":"ss2","ownerReferences":[{"$patch":"delete","uid":"ss1"}]}}`},
		{name: "check if parent uid is escaped", owners: []types.UID{`ss1"hello`}, dependent: "ss2",
			want: `{"metadata":{"uid":"ss2","ownerReferences":[{"$patch":"delete","uid":"ss1\"hello"}]}}`},
		{name: "check if revision uid uid is escaped", owners: []types.UID{"ss1"}, dependent: `ss2"hello`,
			want: `{"metadata":{"uid":"ss2\"hello","ownerReferences":[{"$patch":"delete","uid":"ss1"}]}}`},
		{name: "check the structure of patch bytes with multiple owners", owners: []types.UID{"ss1", "ss2"}, dependent: "ss2",
			want: `{"metadata":{"uid":"ss2","ownerReferences":[{"$patch":"delete","uid":"ss1"},{"$patch":"delete","uid":"ss2"}]}}`},
		{name: "check the structure of patch bytes with a finalizer and multiple owners", owners: []types.UID{"ss1", "ss2"}, dependent: "ss2", finalizers: []string{"f1"},
			want: `{"metadata":{"uid":"ss2","ownerReferences":[{"$patch":"delete","uid":"ss1"},{"$patch":"delete","uid":"ss2"}],"$deleteFromPrimitiveList/finalizers":["f1"]}}`},
		// Beyond the upstream table, pinned to upstream's encoding.
		{name: "no owners encodes null, as upstream", owners: nil, dependent: "d",
			want: `{"metadata":{"uid":"d","ownerReferences":null}}`},
		{name: "empty uids", owners: []types.UID{""}, dependent: "",
			want: `{"metadata":{"uid":"","ownerReferences":[{"$patch":"delete","uid":""}]}}`},
		{name: "html characters escaped like encoding/json", owners: []types.UID{"<&>"}, dependent: "d",
			want: `{"metadata":{"uid":"d","ownerReferences":[{"$patch":"delete","uid":"\u003c\u0026\u003e"}]}}`},
		{name: "several finalizers", owners: []types.UID{"o"}, dependent: "d", finalizers: []string{"a", "b"},
			want: `{"metadata":{"uid":"d","ownerReferences":[{"$patch":"delete","uid":"o"}],"$deleteFromPrimitiveList/finalizers":["a","b"]}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := GenerateDeleteOwnerRefStrategicMergeBytes(tc.dependent, tc.owners, tc.finalizers...)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
}

func TestMergePatchBodies(t *testing.T) {
	owner := controller("default", "123", false)
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "cm-uid"}
	obj := newPod("p", productionLabel, nil)
	obj.ResourceVersion = "42"
	obj.OwnerReferences = []metav1.OwnerReference{other}
	obj.Finalizers = []string{"keep", "f1"}

	t.Run("adopt keeps other owners and merges finalizers", func(t *testing.T) {
		got, err := adoptMergeBytes(owner, fakeKind, obj, "f1", "f2")
		require.NoError(t, err)
		assert.Equal(t, `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"cm","uid":"cm-uid"},`+
			`{"apiVersion":"apps/v1","kind":"Fake","name":"rc","uid":"123","controller":true,"blockOwnerDeletion":true}],`+
			`"uid":"uid-p","resourceVersion":"42","finalizers":["keep","f1","f2"]}}`, string(got))
		assert.Len(t, obj.OwnerReferences, 1, "input not modified")
	})
	t.Run("adopt without finalizers leaves them alone", func(t *testing.T) {
		got, err := adoptMergeBytes(owner, fakeKind, obj)
		require.NoError(t, err)
		assert.NotContains(t, string(got), "finalizers")
	})
	t.Run("release removes only our reference", func(t *testing.T) {
		owned := obj.DeepCopy()
		owned.OwnerReferences = append(owned.OwnerReferences, *metav1.NewControllerRef(owner, fakeKind))
		got, err := releaseMergeBytes(owner.UID, owned, "f1")
		require.NoError(t, err)
		assert.Equal(t, `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"cm","uid":"cm-uid"}],`+
			`"uid":"uid-p","resourceVersion":"42","finalizers":["keep"]}}`, string(got))
		assert.Len(t, owned.OwnerReferences, 2, "input not modified")
	})
	t.Run("release of the last owner clears the list", func(t *testing.T) {
		owned := newPod("p", productionLabel, owner)
		got, err := releaseMergeBytes(owner.UID, owned)
		require.NoError(t, err)
		assert.Equal(t, `{"metadata":{"ownerReferences":null,"uid":"uid-p"}}`, string(got))
	})
}

func FuzzGenerateDeleteOwnerRefStrategicMergeBytes(f *testing.F) {
	f.Add("ss2", "ss1", "ss3", "f1")
	f.Add(`ss2"hello`, `ss1"hello`, "", "")
	f.Add("\x00\xff<>&\u2028", "\\", "\n", "$patch")
	f.Fuzz(func(t *testing.T, dependent, owner1, owner2, finalizer string) {
		owners := []types.UID{types.UID(owner1), types.UID(owner2)}
		var fins []string
		if finalizer != "" {
			fins = []string{finalizer}
		}
		got, err := GenerateDeleteOwnerRefStrategicMergeBytes(types.UID(dependent), owners, fins...)
		if err != nil {
			t.Fatal(err)
		}
		var decoded struct {
			Metadata struct {
				UID             string              `json:"uid"`
				OwnerReferences []map[string]string `json:"ownerReferences"`
				Finalizers      []string            `json:"$deleteFromPrimitiveList/finalizers"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(got, &decoded); err != nil {
			t.Fatalf("invalid JSON %q: %v", got, err)
		}
		// Invalid UTF-8 is replaced by encoding/json; compare what survives a
		// round trip of the input itself.
		if want := roundTrip(dependent); decoded.Metadata.UID != want {
			t.Fatalf("uid %q, want %q", decoded.Metadata.UID, want)
		}
		if len(decoded.Metadata.OwnerReferences) != 2 || decoded.Metadata.OwnerReferences[1]["uid"] != roundTrip(owner2) ||
			decoded.Metadata.OwnerReferences[0]["$patch"] != "delete" {
			t.Fatalf("owner references %v", decoded.Metadata.OwnerReferences)
		}
		if len(decoded.Metadata.Finalizers) != len(fins) {
			t.Fatalf("finalizers %v", decoded.Metadata.Finalizers)
		}
	})
}

func roundTrip(s string) string {
	b, _ := json.Marshal(s)
	var out string
	_ = json.Unmarshal(b, &out)
	return out
}

// TestGenerateAdoptOwnerRefStrategicMergeBytes pins the exported adoption
// patch to the body of upstream's ControllerRevision history adoption
// (ownerReferences, then uid) and to its finalizer form.
func TestGenerateAdoptOwnerRefStrategicMergeBytes(t *testing.T) {
	owner := &metav1.ObjectMeta{Name: "ss", UID: "owner-uid"}
	kind := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}
	got, err := GenerateAdoptOwnerRefStrategicMergeBytes(owner, kind, "rev-uid")
	require.NoError(t, err)
	assert.Equal(t, `{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"ss","uid":"owner-uid","controller":true,"blockOwnerDeletion":true}],"uid":"rev-uid"}}`, string(got))
	got, err = GenerateAdoptOwnerRefStrategicMergeBytes(owner, kind, "rev-uid", "f1")
	require.NoError(t, err)
	assert.Equal(t, `{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"ss","uid":"owner-uid","controller":true,"blockOwnerDeletion":true}],"uid":"rev-uid","finalizers":["f1"]}}`, string(got))
}
