package podgroup_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	library "github.com/ctrlkit/ctrlkit/examples/podgroup"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/examples/podgroup"
)

// The kind registered in the scheme is the library's PodGroup, handled as
// unstructured content, and is the kind of the library's CRD.
func TestAddToSchemeRegistersTheLibrarysKind(t *testing.T) {
	s := runtime.NewScheme()
	require.NoError(t, podgroup.AddToScheme(s))
	obj, err := s.New(podgroup.GroupVersionKind)
	require.NoError(t, err)
	assert.IsType(t, &unstructured.Unstructured{}, obj)
	assert.Equal(t, library.Resource.GroupVersion(), podgroup.GroupVersionKind.GroupVersion())
	assert.Contains(t, string(library.CRD), "kind: "+podgroup.GroupVersionKind.Kind)
	_, err = s.New(podgroup.GroupVersionKind.GroupVersion().WithKind("PodGroupList"))
	assert.NoError(t, err)
}
