package simcluster

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// widget is a minimal custom resource, with a hand-written deep copy.
type widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Size              int `json:"size"`
}

func (w *widget) DeepCopyObject() runtime.Object {
	out := *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

type widgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []widget `json:"items"`
}

func (l *widgetList) DeepCopyObject() runtime.Object {
	out := &widgetList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	for i := range l.Items {
		out.Items = append(out.Items, *l.Items[i].DeepCopyObject().(*widget))
	}
	return out
}

var (
	widgetGV       = schema.GroupVersion{Group: "test.ctrlkit.io", Version: "v1"}
	widgetResource = widgetGV.WithResource("widgets")
	widgetKind     = widgetGV.WithKind("Widget")
)

func widgetScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(s))
	s.AddKnownTypeWithName(widgetKind, &widget{})
	s.AddKnownTypeWithName(widgetGV.WithKind("WidgetList"), &widgetList{})
	metav1.AddToGroupVersion(s, widgetGV)
	return s
}

// With WithScheme the cluster stores a custom resource as it does a pod:
// generated name, UID, resourceVersion, list, held and released watches,
// and the refusal of two controller references, named by its kind.
func TestWithSchemeStoresCustomResources(t *testing.T) {
	defer goleak.VerifyNone(t)
	c := New(WithNodes(1), WithScheme(widgetScheme(t)))
	assert.Len(t, c.Nodes(), 1)
	store := c.Tracker()

	w, err := store.Watch(widgetResource, "ns")
	require.NoError(t, err)
	defer w.Stop()
	release := c.HoldWatches(widgetResource)

	created := &widget{ObjectMeta: metav1.ObjectMeta{GenerateName: "w-", Namespace: "ns"}, Size: 2}
	require.NoError(t, store.Create(widgetResource, created, "ns"))
	assert.Regexp(t, "^w-.{5}$", created.Name)
	assert.NotEmpty(t, created.UID)
	assert.NotEmpty(t, created.ResourceVersion)

	list, err := store.List(widgetResource, widgetKind, "ns")
	require.NoError(t, err)
	require.Len(t, list.(*widgetList).Items, 1)
	held, err := store.List(widgetResource, widgetKind, "ns", metav1.ListOptions{ResourceVersion: "0"})
	require.NoError(t, err)
	assert.Empty(t, held.(*widgetList).Items, "the watch cache's list is held")
	requireNoEvent(t, w)
	release()
	e := readEvents(t, w, 1)[0]
	assert.Equal(t, watch.Added, e.Type)
	assert.Equal(t, created.Name, e.Object.(*widget).Name)

	two := &widget{ObjectMeta: metav1.ObjectMeta{Name: "two", Namespace: "ns", OwnerReferences: []metav1.OwnerReference{
		controllerRef("ReplicaSet", "a", "uid-a"), controllerRef("ReplicaSet", "b", "uid-b")}}}
	err = store.Create(widgetResource, two, "ns")
	require.True(t, apierrors.IsInvalid(err), "two controllers: %v", err)
	var status apierrors.APIStatus
	require.ErrorAs(t, err, &status)
	assert.Equal(t, "Widget", status.Status().Details.Kind)
}

func TestWithSchemeRefusesSchemesWithoutClientGoKinds(t *testing.T) {
	assert.PanicsWithValue(t, "simcluster: WithScheme: nil scheme", func() { WithScheme(nil) })
	assert.Panics(t, func() { WithScheme(runtime.NewScheme()) })
}
