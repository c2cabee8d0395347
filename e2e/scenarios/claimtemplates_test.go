package scenarios

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// The scenario's owners say their claim retention policy in these
// annotations; an absent one is Retain.
const (
	whenDeletedAnnotation = "e2e.ctrlkit.io/when-deleted"
	whenScaledAnnotation  = "e2e.ctrlkit.io/when-scaled"
)

// claimSpec is scaleInSpec whose indexed ConfigMaps each get a claim from
// the template "data", with the policy of the owner's annotations.
type claimSpec struct{ scaleInSpec }

func (claimSpec) ClaimTemplates(rs *appsv1.ReplicaSet) childset.ClaimTemplates {
	return childset.ClaimTemplates{
		Templates: []corev1.PersistentVolumeClaim{{
			ObjectMeta: metav1.ObjectMeta{Name: "data"},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}},
		Retention: appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
			WhenDeleted: appsv1.PersistentVolumeClaimRetentionPolicyType(rs.Annotations[whenDeletedAnnotation]),
			WhenScaled:  appsv1.PersistentVolumeClaimRetentionPolicyType(rs.Annotations[whenScaledAnnotation]),
		},
	}
}

// TestClaimRetention runs an indexed childset of ConfigMaps with a claim
// template under each retention policy against the real apiserver: every
// child's claim is created with it, and the owner references that tell
// the garbage collector (not running here) what to delete are as the
// policy says, after creation, after a scale-down and after a policy
// change. A claim left to the collector holds its index back until it is
// gone.
func TestClaimRetention(t *testing.T) {
	s := newScenario(t, 4*time.Minute)
	ctx, cancel := context.WithCancel(s.ctx)
	factory := informers.NewSharedInformerFactoryWithOptions(s.ctrlClient, 0, informers.WithNamespace(s.ns))
	owners := factory.Apps().V1().ReplicaSets()
	children := factory.Core().V1().ConfigMaps().Informer()
	claims := factory.Core().V1().PersistentVolumeClaims().Informer()
	require.NoError(t, childset.AddControllerIndexer(children))
	control := objectcontrol.New("ConfigMap", objectcontrol.TypedWriter(
		func(ns string) objectcontrol.TypedClient[*corev1.ConfigMap] {
			return s.ctrlClient.CoreV1().ConfigMaps(ns)
		}),
		nil, types.StrategicMergePatchType)
	claimControl := objectcontrol.New("PersistentVolumeClaim", objectcontrol.TypedWriter(
		func(ns string) objectcontrol.TypedClient[*corev1.PersistentVolumeClaim] {
			return s.ctrlClient.CoreV1().PersistentVolumeClaims(ns)
		}),
		nil, types.StrategicMergePatchType)
	recorder := &warningRecorder{}
	c, err := childset.New(owners.Informer(), children, claimSpec{scaleInSpec{owners.Lister()}},
		readyConfigMaps{childset.IndexerLister[*corev1.ConfigMap](children.GetIndexer())}, control,
		childset.WithIndexedNames(nil), childset.WithNameConflictRetry(time.Second), childset.WithEventRecorder(recorder),
		childset.WithClaims(claimControl, childset.IndexerLister[*corev1.PersistentVolumeClaim](claims.GetIndexer()),
			corev1.SchemeGroupVersion.WithKind("ConfigMap"), claims.HasSynced))
	require.NoError(t, err)
	factory.Start(ctx.Done())
	s.runUntilCleanup(ctx, cancel, c.Run, factory.Shutdown)

	const retain, del = "Retain", "Delete"
	type policy struct{ whenDeleted, whenScaled string }
	policies := []policy{{retain, retain}, {del, retain}, {retain, del}, {del, del}}
	name := func(p policy) string { return fmt.Sprintf("d%c-s%c", p.whenDeleted[0]|0x20, p.whenScaled[0]|0x20) }
	rss := map[string]*appsv1.ReplicaSet{}
	for _, p := range policies {
		n := name(p)
		rss[n] = s.createRS(n, 3, map[string]string{"app": n}, func(rs *appsv1.ReplicaSet) {
			rs.Annotations = map[string]string{whenDeletedAnnotation: p.whenDeleted, whenScaledAnnotation: p.whenScaled}
		})
	}

	// refs describes a claim's owner references as "Kind/name", "!" marking
	// a controller reference, or says why it cannot.
	refs := func(claim string) ([]string, types.UID, bool) {
		pvc, err := s.client.CoreV1().PersistentVolumeClaims(s.ns).Get(s.ctx, claim, metav1.GetOptions{})
		if err != nil {
			return []string{err.Error()}, "", false
		}
		var out []string
		for _, ref := range pvc.OwnerReferences {
			d := ref.Kind + "/" + ref.Name
			if ref.Controller != nil && *ref.Controller {
				d += "!"
			}
			out = append(out, d)
		}
		slices.Sort(out)
		var uid types.UID
		if len(pvc.OwnerReferences) == 1 {
			uid = pvc.OwnerReferences[0].UID
		}
		return out, uid, true
	}
	waitRefs := func(claim string, want []string, wantUID types.UID) {
		t.Helper()
		s.eventually(time.Minute, claim+" refers to "+fmt.Sprint(want), func() (bool, string) {
			got, uid, ok := refs(claim)
			return ok && slices.Equal(got, want) && (len(want) == 0 || uid == wantUID), fmt.Sprintf("refs %v (uid %s)", got, uid)
		})
	}
	children3 := func(n string) []string { return []string{n + "-0", n + "-1", n + "-2"} }
	ownerRefs := func(p policy) []string {
		if p.whenDeleted == del {
			return []string{"ReplicaSet/" + name(p)}
		}
		return nil
	}
	childUIDs := map[string]types.UID{}
	for _, p := range policies {
		n := name(p)
		for _, child := range children3(n) {
			s.eventually(time.Minute, child, func() (bool, string) {
				cm, err := s.client.CoreV1().ConfigMaps(s.ns).Get(s.ctx, child, metav1.GetOptions{})
				if err != nil {
					return false, err.Error()
				}
				childUIDs[child] = cm.UID
				return true, ""
			})
			waitRefs("data-"+child, ownerRefs(p), rss[n].UID)
		}
	}

	// Scale each owner down by one: its last child goes, and its claim is
	// handed over to the child when the policy says so.
	for _, p := range policies {
		s.scaleRS(name(p), 2)
	}
	for _, p := range policies {
		n := name(p)
		s.eventually(time.Minute, n+"-2 deleted", func() (bool, string) {
			_, err := s.client.CoreV1().ConfigMaps(s.ns).Get(s.ctx, n+"-2", metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
		if p.whenScaled == del {
			waitRefs("data-"+n+"-2", []string{"ConfigMap/" + n + "-2"}, childUIDs[n+"-2"])
		} else {
			waitRefs("data-"+n+"-2", ownerRefs(p), rss[n].UID)
		}
		for _, child := range children3(n)[:2] {
			waitRefs("data-"+child, ownerRefs(p), rss[n].UID)
		}
	}

	// Delete/Delete becomes Retain/Retain: the references to the owner go.
	dd := name(policy{del, del})
	_, err = s.client.AppsV1().ReplicaSets(s.ns).Patch(s.ctx, dd, types.MergePatchType,
		fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q,%q:%q}}}`, whenDeletedAnnotation, retain, whenScaledAnnotation, retain),
		metav1.PatchOptions{})
	require.NoError(t, err)
	for _, child := range children3(dd)[:2] {
		waitRefs("data-"+child, nil, "")
	}

	// Scaled up again, dr-sd's index 2 waits for the collector to delete
	// the claim handed over to the gone child; once it is gone (deleted
	// here, and its protection finalizer removed as kube-controller-manager
	// would), the child and a fresh claim come back.
	ds := name(policy{retain, del})
	s.scaleRS(ds, 3)
	time.Sleep(3 * time.Second)
	_, err = s.client.CoreV1().ConfigMaps(s.ns).Get(s.ctx, ds+"-2", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "%s-2 created on a claim left to the collector: %v", ds, err)
	claim := "data-" + ds + "-2"
	require.NoError(t, s.client.CoreV1().PersistentVolumeClaims(s.ns).Delete(s.ctx, claim, metav1.DeleteOptions{}))
	_, err = s.client.CoreV1().PersistentVolumeClaims(s.ns).Patch(s.ctx, claim, types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		require.NoError(t, err)
	}
	s.eventually(time.Minute, ds+"-2 back", func() (bool, string) {
		_, err := s.client.CoreV1().ConfigMaps(s.ns).Get(s.ctx, ds+"-2", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	waitRefs(claim, nil, "")
	for _, w := range recorder.list() {
		t.Errorf("Warning event: %s", w)
	}
}
