package podset

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ctrlkit/ctrlkit/childset"
)

// gatedKind is a Kind whose owners hold their pods' deletions.
type gatedKind struct{ Kind[*appsv1.ReplicaSet] }

func (gatedKind) DeletionGate(*appsv1.ReplicaSet) childset.DeletionGate {
	return childset.DeletionGate{Label: "test.ctrlkit.io/drain", Timeout: time.Hour}
}

// Pods are held by a Kind's deletion gate as any child is: a scale-down
// marks the ranking's victims and deletes one only once its label is
// cleared.
func TestDeletionGateHoldsPods(t *testing.T) {
	rs := newRS("foobar", 1, fooBar)
	e := newEnvWrapped(t, func(k Kind[*appsv1.ReplicaSet]) Kind[*appsv1.ReplicaSet] { return gatedKind{k} },
		[]runtime.Object{rs}, WithReadYourWrites(nil))
	e.addOwner(rs)
	// b is pending, so upstream's ranking deletes it first.
	pods := []*v1.Pod{newPod("a", rs, v1.PodRunning, fooBar, true), newPod("b", rs, v1.PodPending, fooBar, true)}
	e.addPods(pods...)

	require.NoError(t, e.sync(rs))
	e.requireCounts(0, 0, 1) // the victim marked, nothing deleted
	assert.Contains(t, string(e.pc.Patches[0]), `"test.ctrlkit.io/drain":"pending"`)
	assert.Contains(t, string(e.pc.Patches[0]), childset.DeletionRequestedAnnotation)

	// The drain is done: the victim's label cleared, its mark kept.
	victim := pods[1].DeepCopy()
	victim.Annotations = map[string]string{childset.DeletionRequestedAnnotation: time.Now().UTC().Format(time.RFC3339)}
	victim.ResourceVersion = "2"
	require.NoError(t, e.podStore().Update(victim))
	e.pc.Clear()
	require.NoError(t, e.sync(rs))
	e.requireCounts(0, 1, 0)
	assert.Equal(t, []string{victim.Name}, e.pc.DeletePodName)
}

// A held scale-down keeps choosing the pods it marked, though the ranking
// would now pick another first: the gate never holds more pods than the
// scale-down deletes.
func TestDeletionGateKeepsItsVictims(t *testing.T) {
	rs := newRS("foobar", 1, fooBar)
	e := newEnvWrapped(t, func(k Kind[*appsv1.ReplicaSet]) Kind[*appsv1.ReplicaSet] { return gatedKind{k} },
		[]runtime.Object{rs}, WithReadYourWrites(nil))
	e.addOwner(rs)
	// b is pending, so upstream's ranking deletes it first.
	pods := []*v1.Pod{newPod("a", rs, v1.PodRunning, fooBar, true), newPod("b", rs, v1.PodPending, fooBar, true)}
	e.addPods(pods...)
	require.NoError(t, e.sync(rs))
	e.requireCounts(0, 0, 1)
	assert.Contains(t, string(e.pc.Patches[0]), `"test.ctrlkit.io/drain":"pending"`)

	// b, marked, is running now, and a pending: the ranking would choose
	// a, but b stays the victim, unmarked a untouched.
	marked := pods[1].DeepCopy()
	marked.Status.Phase, marked.Spec.NodeName = v1.PodRunning, pods[0].Spec.NodeName
	marked.Labels = map[string]string{"foo": "bar", "test.ctrlkit.io/drain": childset.DeletionGatePending}
	marked.Annotations = map[string]string{childset.DeletionRequestedAnnotation: time.Now().UTC().Format(time.RFC3339)}
	marked.ResourceVersion = "2"
	require.NoError(t, e.podStore().Update(marked))
	other := pods[0].DeepCopy()
	other.Status.Phase, other.Spec.NodeName = v1.PodPending, ""
	other.ResourceVersion = "2"
	require.NoError(t, e.podStore().Update(other))
	e.pc.Clear()
	require.NoError(t, e.sync(rs))
	e.requireCounts(0, 0, 0)
}
