package scenarios

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/examples/gang"
	"github.com/ctrlkit/ctrlkit/podset"
	"github.com/ctrlkit/ctrlkit/podstate"
)

// inPlaceReadiness is a pod's availability to the sampler: ready, and
// running what its spec asks, as the controller counts it.
func inPlaceReadiness(u *unstructured.Unstructured) (bool, time.Time) {
	var pod corev1.Pod
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &pod); err != nil {
		return false, time.Time{}
	}
	ready, since := podReadiness(u)
	return ready && runsItsSpec(&pod), since
}

// runsItsSpec reports whether a pod runs what its spec asks.
var runsItsSpec = podset.InPlace{}.InPlaceDone

// 20 pods roll an image change, then a CPU change, in place with
// maxUnavailable 2: no pod is replaced, every pod ends at the new revision
// running it, the CPU goes through the resize subresource, and the watch
// never sees fewer than 18 available. An environment variable cannot change
// in place: InPlaceIfPossible recreates the pods, InPlaceOnly leaves them
// with a Warning.
func TestPodSetInPlaceUpdate(t *testing.T) {
	s := newScenario(t, 5*time.Minute)
	require.NoError(t, s.env.InstallCRDsFromYAML(s.ctx, gang.CRD))
	dyn, err := dynamic.NewForConfig(s.clientConfig(nil))
	require.NoError(t, err)
	podsGVR := corev1.SchemeGroupVersion.WithResource("pods")
	sampler := newRolloutSampler(t, dyn, s.ns, "web", "Gang", gang.Resource, podsGVR, false, inPlaceReadiness)
	s.simulateKubelet()

	tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ptrTemplate(map[string]string{"app": "web"}))
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(tmpl, []any{map[string]any{
		"name": "main", "image": "trainer:v1", "resources": map[string]any{"requests": map[string]any{"cpu": "100m"}},
	}}, "spec", "containers"))
	g := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"replicas": int64(20),
		"strategy": map[string]any{"type": string(childset.InPlaceIfPossible),
			"rollingUpdate": map[string]any{"maxSurge": int64(0), "maxUnavailable": int64(2)}},
		"template": tmpl,
	}}}
	g.SetGroupVersionKind(gang.Kind)
	g.SetName("web")
	gangs := dyn.Resource(gang.Resource).Namespace(s.ns)
	_, err = gangs.Create(s.ctx, g, metav1.CreateOptions{})
	require.NoError(t, err)
	resizes, warnings := s.runInPlacePodSet()

	previous := s.settleRollout(sampler, 20, "", "the first 20 pods")
	before := s.podUIDs("app=web")
	// A merge patch: the container list is replaced whole.
	container := func(fields string) string {
		return fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"main",%s}]}}}}`, fields)
	}
	inPlace := []struct{ name, patch string }{
		{"image v2 in place", container(`"image":"trainer:v2","resources":{"requests":{"cpu":"100m"}}`)},
		{"cpu 200m through resize", container(`"image":"trainer:v2","resources":{"requests":{"cpu":"200m"}}`)},
	}
	for _, phase := range inPlace {
		s.waitAvailable(20)
		sampler.startPhase(phase.name)
		_, err := gangs.Patch(s.ctx, "web", types.MergePatchType, []byte(phase.patch), metav1.PatchOptions{})
		require.NoError(t, err, phase.name)
		previous = s.settleRollout(sampler, 20, previous, phase.name)
		s.eventually(time.Minute, phase.name+": every pod runs it", func() (bool, string) {
			done := 0
			for _, p := range s.listPods("app=web") {
				if runsItsSpec(&p) {
					done++
				}
			}
			return done == 20, fmt.Sprintf("%d of 20 done", done)
		})
		require.Equal(t, before, s.podUIDs("app=web"), "%s: no pod replaced; Warnings: %v", phase.name, warnings.list())
	}
	for _, p := range s.listPods("app=web") {
		require.Equal(t, "trainer:v2", p.Spec.Containers[0].Image, p.Name)
		require.Equal(t, "200m", p.Spec.Containers[0].Resources.Requests.Cpu().String(), p.Name)
	}
	require.GreaterOrEqual(t, resizes.Load(), int64(20), "every pod resized through pods/resize")
	rep := sampler.replay()
	require.Empty(t, rep.violations)
	for _, ph := range rep.phases {
		if ph.name != "" {
			require.GreaterOrEqual(t, ph.minAvail, 18, "phase %q", ph.name)
			t.Logf("phase %q: %d instants, at least %d available, at most %d pods", ph.name, ph.samples, ph.minAvail, ph.maxTotal)
		}
	}

	// An environment variable: recreated under InPlaceIfPossible.
	s.waitAvailable(20)
	sampler.startPhase("env, recreated")
	env := container(`"image":"trainer:v2","resources":{"requests":{"cpu":"200m"}},"env":[{"name":"MODE","value":"a"}]`)
	_, err = gangs.Patch(s.ctx, "web", types.MergePatchType, []byte(env), metav1.PatchOptions{})
	require.NoError(t, err)
	s.settleRollout(sampler, 20, previous, "env, recreated")
	recreated := s.podUIDs("app=web")
	for name := range before {
		require.NotContains(t, recreated, name, "replaced")
	}
	require.Empty(t, sampler.replay().violations)

	// And left as they are under InPlaceOnly, with a Warning.
	only := fmt.Sprintf(`{"spec":{"strategy":{"type":%q},"template":{"spec":{"containers":[{"name":"main",`+
		`"image":"trainer:v2","resources":{"requests":{"cpu":"200m"}},"env":[{"name":"MODE","value":"b"}]}]}}}}`, childset.InPlaceOnly)
	_, err = gangs.Patch(s.ctx, "web", types.MergePatchType, []byte(only), metav1.PatchOptions{})
	require.NoError(t, err)
	s.eventually(time.Minute, "the InPlaceOnly refusal", func() (bool, string) {
		return slices.ContainsFunc(warnings.list(), func(w string) bool {
			return strings.HasPrefix(w, childset.ReasonInPlaceUpdateRefused+":")
		}), strings.Join(warnings.list(), "; ")
	})
	time.Sleep(2 * time.Second) // a sync more, in which nothing may change
	require.Equal(t, recreated, s.podUIDs("app=web"), "InPlaceOnly replaces nothing")
	for _, p := range s.listPods("app=web") {
		require.Equal(t, "a", p.Spec.Containers[0].Env[0].Value, p.Name)
	}
}

// waitAvailable waits until n pods of the scenario are ready and run
// their spec: a phase starts from a settled set, so that the sampler's
// floor of available pods is the controller's doing.
func (s *scenario) waitAvailable(n int) {
	s.t.Helper()
	s.eventually(time.Minute, fmt.Sprintf("%d pods available", n), func() (bool, string) {
		avail := 0
		for _, p := range s.listPods("app=web") {
			if podstate.IsReady(&p) && runsItsSpec(&p) && p.DeletionTimestamp == nil {
				avail++
			}
		}
		return avail == n, fmt.Sprintf("%d available", avail)
	})
}

// runInPlacePodSet starts childset over the Gang example's adapters, which
// read spec.strategy.type and update pods in place through podset.InPlace,
// on a client that counts the PATCHes of pods/resize, and returns the count
// and the controller's Warnings.
func (s *scenario) runInPlacePodSet() (*atomic.Int64, *warningRecorder) {
	s.t.Helper()
	resizes := &atomic.Int64{}
	cfg := s.clientConfig(func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/resize") {
				resizes.Add(1)
			}
			return next.RoundTrip(r)
		})
	})
	client, err := kubernetes.NewForConfig(cfg)
	require.NoError(s.t, err)
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(s.t, err)
	return resizes, s.runGangPodSet(client, dyn)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// podUIDs is the namespace's pods matching selector, by name, with their
// UIDs.
func (s *scenario) podUIDs(selector string) map[string]types.UID {
	out := map[string]types.UID{}
	for _, p := range s.listPods(selector) {
		if p.DeletionTimestamp == nil {
			out[p.Name] = p.UID
		}
	}
	return out
}

// simulateKubelet stands in for the kubelet of every pod of the
// namespace: 100 ms after a pod's spec asks for images it does not run
// (or it runs nothing yet), it
// binds the pod if it is not bound and reports every container running its
// spec's image, and the pod Ready. It stops at the test's cleanup.
func (s *scenario) simulateKubelet() {
	const delay = 100 * time.Millisecond
	s.ensureNode()
	ctx, cancel := context.WithCancel(s.ctx)
	factory := informers.NewSharedInformerFactoryWithOptions(s.client, 0, informers.WithNamespace(s.ns))
	indexer := factory.Core().V1().Pods().Informer().GetIndexer()
	factory.Start(ctx.Done())
	var wg sync.WaitGroup
	wg.Go(func() {
		seen := map[string]time.Time{} // by UID and the images asked for
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for _, obj := range indexer.List() {
				pod, ok := obj.(*corev1.Pod)
				if !ok || pod.DeletionTimestamp != nil || (len(pod.Status.ContainerStatuses) > 0 && podstate.IsReady(pod) && runsItsSpec(pod)) {
					continue
				}
				key := string(pod.UID)
				for _, c := range pod.Spec.Containers {
					key += " " + c.Image
				}
				first, ok := seen[key]
				if !ok {
					seen[key] = time.Now()
					continue
				}
				if time.Since(first) < delay {
					continue
				}
				if err := s.runPodSpec(ctx, pod); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && ctx.Err() == nil {
					s.t.Errorf("running %s: %v", pod.Name, err)
				}
			}
		}
	})
	s.t.Cleanup(func() {
		cancel()
		wg.Wait()
		factory.Shutdown()
	})
}

// ensureNode creates the Node the scenarios bind pods to, if it is not
// there, with room for every pod: a resize is admitted only for a pod
// whose node exists and can fit it.
func (s *scenario) ensureNode() {
	s.t.Helper()
	nodes := s.client.CoreV1().Nodes()
	node, err := nodes.Create(s.ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return
	}
	require.NoError(s.t, err)
	room := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000"), corev1.ResourceMemory: resource.MustParse("1Ti"),
		corev1.ResourcePods: resource.MustParse("10000")}
	node.Status.Capacity, node.Status.Allocatable = room, room
	_, err = nodes.UpdateStatus(s.ctx, node, metav1.UpdateOptions{})
	require.NoError(s.t, err)
}

// runPodSpec binds pod and reports its containers running their images,
// ready, as a kubelet would once they started.
func (s *scenario) runPodSpec(ctx context.Context, pod *corev1.Pod) error {
	pods := s.client.CoreV1().Pods(s.ns)
	if pod.Spec.NodeName == "" {
		err := pods.Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, UID: pod.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: "node-1"},
		}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsConflict(err) {
			return fmt.Errorf("bind: %w", err)
		}
	}
	now := metav1.Now()
	pod = pod.DeepCopy()
	pod.Status.Phase = corev1.PodRunning
	pod.Status.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			// The resources a kubelet that can resize reports (the API
			// server refuses a resize of a running pod without them).
			Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: true, Started: new(true), Resources: c.Resources.DeepCopy(),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	_, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	return err
}
