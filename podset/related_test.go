package podset

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/podcontrol"
	"github.com/ctrlkit/ctrlkit/podranking"
)

// spreadScene is a ReplicaSet of one replica, its controller's only one,
// with two ready pods: on-a on node-a, ready for an hour, and on-b on
// node-b, ready for a second. Ranked by themselves the nodes tie and the
// more recently ready on-b goes first. foreign is a pod of another
// ReplicaSet, of another Deployment, on node-a, which the first one's
// selector matches too: upstream counts it among the related pods, which
// puts node-a ahead, so on-a goes first.
type spreadScene struct {
	rs, other            *appsv1.ReplicaSet
	onA, onB, foreignPod *v1.Pod
}

func newSpreadScene() spreadScene {
	rs := newRS("rs", 1, fooBar)
	other := newRS("other", 1, fooBar)
	other.OwnerReferences = []metav1.OwnerReference{{UID: "456", Controller: ptr.To(true), Kind: "Deployment", Name: "d2", APIVersion: "apps/v1"}}
	onNode := func(p *v1.Pod, node string, readyFor time.Duration) *v1.Pod {
		p.Spec.NodeName = node
		p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(time.Now().Add(-readyFor))
		return p
	}
	return spreadScene{
		rs: rs, other: other,
		onA:        onNode(newPod("on-a", rs, v1.PodRunning, fooBar, true), "node-a", time.Hour),
		onB:        onNode(newPod("on-b", rs, v1.PodRunning, fooBar, true), "node-b", time.Second),
		foreignPod: onNode(newPod("foreign", other, v1.PodRunning, fooBar, true), "node-a", time.Hour),
	}
}

// upstreamVictim is podranking's choice among the scene's own pods, ranked
// by related, as upstream's getPodsToDelete makes it.
func (s spreadScene) upstreamVictim(related ...*v1.Pod) string {
	return podranking.PodsToDelete([]*v1.Pod{s.onA, s.onB}, related, 1)[0].Name
}

// TestScaleDownCountsForeignPodsTheSelectorMatches: the related pods of an
// owner that is its controller's only one are all the pods of the namespace
// its selector matches, also those another owner controls. Taking them from
// the sync's own listing, which holds only the owner's pods and the
// orphans, would leave the foreign pod out and delete on-b.
func TestScaleDownCountsForeignPodsTheSelectorMatches(t *testing.T) {
	s := newSpreadScene()
	require.Equal(t, "on-a", s.upstreamVictim(s.onA, s.onB, s.foreignPod), "the scene: counted, the foreign pod decides")
	require.Equal(t, "on-b", s.upstreamVictim(s.onA, s.onB), "the scene: uncounted, the other pod goes")

	for _, foreign := range []bool{true, false} {
		t.Run(fmt.Sprintf("foreign=%v", foreign), func(t *testing.T) {
			e := newEnv(t, []runtime.Object{s.rs})
			e.addOwner(s.rs)
			e.addOwner(s.other)
			e.addPods(s.onA, s.onB)
			want := "on-b"
			if foreign {
				e.addPods(s.foreignPod)
				want = "on-a"
			}
			require.NoError(t, e.sync(s.rs))
			assert.Equal(t, []string{want}, e.pc.DeletePodName)
		})
	}
}

// bareInformer is a pod informer with no index but those podset adds,
// where client-go's factory would register the namespace index.
type bareInformer struct{ inf cache.SharedIndexInformer }

func (b bareInformer) Informer() cache.SharedIndexInformer { return b.inf }
func (b bareInformer) Lister() corelisters.PodLister {
	return corelisters.NewPodLister(b.inf.GetIndexer())
}

// TestScaleDownWithoutNamespaceIndex: on a pod informer without the
// namespace index the pods of the namespace cannot be counted, so the
// related pods are listed as upstream lists them, and the foreign pod still
// counts.
func TestScaleDownWithoutNamespaceIndex(t *testing.T) {
	for _, foreign := range []bool{true, false} {
		t.Run(fmt.Sprintf("foreign=%v", foreign), func(t *testing.T) {
			s := newSpreadScene()
			_, ctx := ktesting.NewTestContext(t)
			client := fake.NewSimpleClientset(s.rs)
			f := informers.NewSharedInformerFactory(client, 0)
			rsInf := f.Apps().V1().ReplicaSets().Informer()
			podInf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &v1.Pod{}, 0, cache.Indexers{})
			pc := &podcontrol.FakePodControl{}
			c, err := New(ctx, client, bareInformer{podInf}, rsInf, Kind[*appsv1.ReplicaSet](rsKind{client: client, indexer: rsInf.GetIndexer()}),
				WithPodControl(pc), WithEventRecorder(record.NewFakeRecorder(100)))
			require.NoError(t, err)
			_, hasNamespaceIndex := podInf.GetIndexer().GetIndexers()[cache.NamespaceIndex]
			require.False(t, hasNamespaceIndex, "the test needs an informer without the namespace index")
			require.NoError(t, rsInf.GetIndexer().Add(s.rs))
			require.NoError(t, rsInf.GetIndexer().Add(s.other))
			pods := []*v1.Pod{s.onA, s.onB}
			want := "on-b"
			if foreign {
				pods, want = append(pods, s.foreignPod), "on-a"
			}
			for _, p := range pods {
				require.NoError(t, podInf.GetIndexer().Add(p))
			}

			_, err = c.Reconcile(ctx, s.rs.Namespace+"/"+s.rs.Name)
			require.NoError(t, err)
			assert.Equal(t, []string{want}, pc.DeletePodName)
		})
	}
}
