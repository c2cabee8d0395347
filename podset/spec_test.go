package podset

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/internal/ownermemo"
)

// lastStatus returns the last ReplicaSet status written through the API,
// or nil.
func lastStatus(e *env) *appsv1.ReplicaSetStatus {
	var st *appsv1.ReplicaSetStatus
	for _, a := range e.client.Actions() {
		if u, ok := a.(k8stesting.UpdateAction); ok && a.GetSubresource() == "status" {
			st = &u.GetObject().(*appsv1.ReplicaSet).Status
		}
	}
	return st
}

// drainEvents returns the events recorded so far.
func drainEvents(e *env) []string {
	var out []string
	for {
		select {
		case ev := <-e.rec.Events:
			out = append(out, ev)
		default:
			return out
		}
	}
}

// syncRepeatedly runs n queued syncs of rs, as owner and pod events would,
// and returns how often the queue retried it.
func syncRepeatedly(t *testing.T, e *env, rs *appsv1.ReplicaSet, n int) int {
	t.Helper()
	key := rs.Namespace + "/" + rs.Name
	for range n {
		e.c.Queue().Add(key)
		require.True(t, e.c.ProcessNextWorkItem(e.ctx))
	}
	return e.c.Queue().NumRequeues(key)
}

// TestSyncRefusesSelectorNotMatchingTemplate: an owner whose template's pods
// its selector would not select is refused before any write. The previous
// code created its pods, released them (they do not match) and created
// again on every sync.
func TestSyncRefusesSelectorNotMatchingTemplate(t *testing.T) {
	rs := newRS("rs", 2, fooBar)
	rs.Spec.Template.Labels = map[string]string{"foo": "other"}
	e := newEnv(t, []runtime.Object{rs})
	e.addOwner(rs)
	owned := newPod("owned", rs, v1.PodRunning, fooBar, true)
	orphan := newPod("orphan", rs, v1.PodRunning, fooBar, false)
	e.addPods(owned, orphan)

	assert.Zero(t, syncRepeatedly(t, e, rs, 5), "no retry: the owner's next update syncs it again")
	e.requireCounts(0, 0, 0) // no create, delete, adoption or release

	events := drainEvents(e)
	require.Len(t, events, 5)
	for _, ev := range events {
		assert.True(t, strings.HasPrefix(ev, "Warning "+childset.ReasonSelectorMismatch+" "), ev)
		assert.Contains(t, ev, `selector "foo=bar" does not match the template's labels "foo=other"`)
	}
	st := lastStatus(e)
	require.NotNil(t, st, "the status is written")
	assert.EqualValues(t, 1, st.Replicas, "the pods the owner already controls")

	// Fixing the template lets the next sync proceed.
	fixed := rs.DeepCopy()
	fixed.Spec.Template.Labels = fooBar
	e.addOwner(fixed)
	require.NoError(t, e.sync(fixed))
	e.requireCounts(0, 0, 1) // the orphan is adopted, making two
}

// TestSyncRefusesEmptySelector: a selector of {} would select every pod of
// the namespace; the previous code adopted them all and then deleted the
// surplus.
func TestSyncRefusesEmptySelector(t *testing.T) {
	rs := newRS("rs", 1, nil)
	rs.Spec.Selector = &metav1.LabelSelector{}
	rs.Spec.Template.Labels = fooBar
	e := newEnv(t, []runtime.Object{rs})
	e.addOwner(rs)
	e.addPods(newPods(3, "orphan", rs, v1.PodRunning, map[string]string{"app": "unrelated"}, false)...)

	assert.Zero(t, syncRepeatedly(t, e, rs, 3))
	e.requireCounts(0, 0, 0)
	events := drainEvents(e)
	require.Len(t, events, 3)
	assert.True(t, strings.HasPrefix(events[0], "Warning "+childset.ReasonSelectorInvalid+" "), events[0])
}

// TestSyncStatusInputCarriesSpecErr: the Kind sees the refusal in
// StatusInput.SpecErr, with ManageErr unset.
func TestSyncStatusInputCarriesSpecErr(t *testing.T) {
	rs := newRS("rs", 2, fooBar)
	rs.Spec.Template.Labels = nil
	var got []StatusInput
	e := newEnvWrapped(t, func(k Kind[*appsv1.ReplicaSet]) Kind[*appsv1.ReplicaSet] {
		return statusSpy{Kind: k, seen: &got}
	}, []runtime.Object{rs})
	e.addOwner(rs)
	require.NoError(t, e.sync(rs))
	require.Len(t, got, 1)
	require.NotNil(t, got[0].SpecErr)
	assert.Equal(t, childset.ReasonSelectorMismatch, got[0].SpecErr.Reason)
	assert.NoError(t, got[0].ManageErr)
	assert.Empty(t, got[0].Active)
}

// statusSpy records every StatusInput its Kind is given.
type statusSpy struct {
	Kind[*appsv1.ReplicaSet]
	seen *[]StatusInput
}

func (s statusSpy) UpdateStatus(ctx context.Context, rs *appsv1.ReplicaSet, in StatusInput) (*appsv1.ReplicaSet, error) {
	*s.seen = append(*s.seen, in)
	return s.Kind.UpdateStatus(ctx, rs, in)
}

// templateKind is a Kind whose owners all have one template.
type templateKind struct {
	rsKind
	tmpl *v1.PodTemplateSpec
}

func (k templateKind) Template(*appsv1.ReplicaSet) *v1.PodTemplateSpec { return k.tmpl }

// TestCheckSpec: the pod built from the template, a nil one included, is
// refused as podset always refused the template.
func TestCheckSpec(t *testing.T) {
	withLabels := func(l map[string]string) *v1.PodTemplateSpec {
		return &v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}}
	}
	notIn, err := labels.Parse("app notin (x)")
	require.NoError(t, err)
	for _, tc := range []struct {
		name     string
		selector labels.Selector
		selErr   error
		tmpl     *v1.PodTemplateSpec
		want     string // reason, "" when accepted
	}{
		{"matching", labels.SelectorFromSet(fooBar), nil, withLabels(map[string]string{"foo": "bar", "x": "y"}), ""},
		{"not matching", labels.SelectorFromSet(fooBar), nil, withLabels(map[string]string{"x": "y"}), childset.ReasonSelectorMismatch},
		{"nil template", labels.SelectorFromSet(fooBar), nil, nil, childset.ReasonSelectorMismatch},
		{"negative selector matches a label-less template", notIn, nil, nil, ""},
		{"conversion error", nil, assert.AnError, withLabels(fooBar), childset.ReasonSelectorInvalid},
		{"nil selector", nil, nil, withLabels(fooBar), childset.ReasonSelectorInvalid},
		{"empty selector", labels.Everything(), nil, withLabels(fooBar), childset.ReasonSelectorInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := newRS("foobar", 1, fooBar)
			pod, err := podSpec[*appsv1.ReplicaSet]{kind: templateKind{rsKind{}, tc.tmpl}, built: &ownermemo.Store[*builtPod]{}}.NewChild(rs)
			require.NoError(t, err)
			var got *childset.SpecError
			errors.As(childset.CheckSelector(tc.selector, tc.selErr, pod.Labels), &got)
			if tc.want == "" {
				assert.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			assert.Equal(t, tc.want, got.Reason)
			if tc.selErr != nil {
				assert.ErrorIs(t, got, tc.selErr)
			}
		})
	}
}
