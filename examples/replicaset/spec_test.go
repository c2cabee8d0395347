package replicaset

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ctrlkit/ctrlkit/childset"
)

// lastWrittenStatus returns the last owner object written to the status
// subresource, or nil.
func lastWrittenStatus(e *env) runtime.Object {
	var last runtime.Object
	for _, a := range e.client.Actions() {
		if u, ok := a.(k8stesting.UpdateAction); ok && a.GetSubresource() == "status" {
			last = u.GetObject()
		}
	}
	return last
}

func setTemplateLabels(o metav1.Object, l map[string]string) {
	switch x := o.(type) {
	case *appsv1.ReplicaSet:
		x.Spec.Template.Labels = l
	case *v1.ReplicationController:
		x.Spec.Template.Labels = l
	}
}

// TestMismatchedTemplateIsRefused: an owner of 2 whose selector does not
// match its template's labels makes no pod over many syncs, records a
// Warning and reports a ReplicaFailure condition of reason
// SelectorMismatch. The previous code created the pods, released them and
// created again.
func TestMismatchedTemplateIsRefused(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		o := k.newOwner(2, fooBar)
		setTemplateLabels(o, map[string]string{"foo": "baz"})
		e := newEnvWithOwner(t, k, o)
		for range 10 {
			e.c.Queue().Add(key(o))
			require.True(t, e.c.ProcessNextWorkItem(e.ctx))
		}
		assert.Zero(t, e.c.Queue().NumRequeues(key(o)), "no retry loop")
		e.requireCounts(0, 0, 0)
		require.NotEmpty(t, e.rec.Events)
		assert.True(t, strings.HasPrefix(<-e.rec.Events, "Warning "+childset.ReasonSelectorMismatch+" "))
		written := lastWrittenStatus(e)
		require.NotNil(t, written, "the status is written")
		assert.Equal(t, childset.ReasonSelectorMismatch, k.failureReason(written))
	})
}

// TestEmptySelectorAdoptsNothing: a ReplicaSet selector of {} is refused by
// the Kind, as the API's validation refuses it; the previous code adopted
// every pod of the namespace and deleted the surplus.
func TestEmptySelectorAdoptsNothing(t *testing.T) {
	rs := rsKind.newOwner(1, fooBar).(*appsv1.ReplicaSet)
	rs.Spec.Selector = &metav1.LabelSelector{}
	e := newEnvWithOwner(t, rsKind, rs)
	e.addPods(newPods(3, "stranger", rs, rsKind, v1.PodRunning, map[string]string{"app": "other"}, false)...)
	require.NoError(t, e.sync(rs))
	e.requireCounts(0, 0, 0)
	require.NotEmpty(t, e.rec.Events)
	assert.True(t, strings.HasPrefix(<-e.rec.Events, "Warning "+childset.ReasonSelectorInvalid+" "))
	written := lastWrittenStatus(e)
	require.NotNil(t, written)
	assert.Equal(t, childset.ReasonSelectorInvalid, rsKind.failureReason(written))
	// Orphans wake no owner with an empty selector.
	e.c.ChildEventHandler().OnAdd(newPod("another", rs, rsKind, v1.PodRunning, map[string]string{"app": "other"}, false), false)
	assert.Empty(t, queued(e.c))
}

// TestReplicationControllerEmptySelector: an RC's empty selector takes the
// template's labels, as the API server defaults it; with no template labels
// either it is refused.
func TestReplicationControllerEmptySelector(t *testing.T) {
	kind := &ReplicationControllerKind{}
	t.Run("defaults to the template labels", func(t *testing.T) {
		rc := rcKind.newOwner(1, nil).(*v1.ReplicationController)
		rc.Spec.Template.Labels = fooBar
		sel, err := kind.Selector(rc)
		require.NoError(t, err)
		assert.Equal(t, "foo=bar", sel.String())

		e := newEnvWithOwner(t, rcKind, rc)
		e.addPods(newPod("match", rc, rcKind, v1.PodRunning, fooBar, false),
			newPod("stranger", rc, rcKind, v1.PodRunning, map[string]string{"app": "other"}, false))
		require.NoError(t, e.sync(rc))
		e.requireCounts(0, 0, 1) // only the matching orphan is adopted
	})
	t.Run("refused without template labels", func(t *testing.T) {
		rc := rcKind.newOwner(1, nil).(*v1.ReplicationController)
		rc.Spec.Template.Labels = nil
		_, err := kind.Selector(rc)
		require.ErrorIs(t, err, errEmptySelector)
		rc.Spec.Template = nil
		_, err = kind.Selector(rc)
		require.ErrorIs(t, err, errEmptySelector)

		e := newEnvWithOwner(t, rcKind, rc)
		e.addPods(newPods(2, "stranger", rc, rcKind, v1.PodRunning, map[string]string{"app": "other"}, false)...)
		require.NoError(t, e.sync(rc))
		e.requireCounts(0, 0, 0)
	})
}
