package binary

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/e2e/kubetest"
)

// scenario is one test's slice of the shared control plane: a deadline, a
// fresh namespace and an admin client for the test's own requests.
type scenario struct {
	t      testing.TB
	ctx    context.Context
	ns     string
	client kubernetes.Interface
}

// newScenario bounds t by timeout, gives it a namespace, and removes the
// controller's Lease afterwards so the next scenario starts with none.
func newScenario(t testing.TB, timeout time.Duration) *scenario {
	t.Helper()
	return newScenarioOn(t, timeout, env)
}

// newScenarioOn is newScenario on another control plane.
func newScenarioOn(t testing.TB, timeout time.Duration, e *kubetest.Env) *scenario {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	client, err := kubernetes.NewForConfig(e.Config)
	require.NoError(t, err)
	ns, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: namespacePrefix(t.Name())},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		// Registered first, so it runs after every process has been killed.
		err := client.CoordinationV1().Leases(controllerNamespace).Delete(context.Background(), controllerLeaseName, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete lease: %v", err)
		}
	})
	return &scenario{t: t, ctx: ctx, ns: ns.Name, client: client}
}

var nonDNS = regexp.MustCompile(`[^a-z0-9]+`)

func namespacePrefix(testName string) string {
	s := strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(testName), "-"), "-")
	if len(s) > 40 {
		s = s[:40]
	}
	return s + "-"
}

// controllerArgs are the flags every scenario passes: the kubeconfig, the
// scenario's namespace, and verbose enough logs to see leader election.
func (s *scenario) controllerArgs(kubeconfig string, extra ...string) []string {
	return append([]string{"--kubeconfig=" + kubeconfig, "--namespace=" + s.ns, "--v=2"}, extra...)
}

// leaderArgs turn on leader election with the shipped Lease name.
func leaderArgs(d leaseTiming) []string {
	return []string{
		"--leader-elect=true",
		"--leader-elect-resource-namespace=" + controllerNamespace,
		"--leader-elect-resource-name=" + controllerLeaseName,
		"--leader-elect-lease-duration=" + d.lease.String(),
		"--leader-elect-renew-deadline=" + d.renew.String(),
		"--leader-elect-retry-period=" + d.retry.String(),
	}
}

type leaseTiming struct{ lease, renew, retry time.Duration }

var podTemplate = corev1.PodTemplateSpec{
	Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "app", Image: "registry.invalid/pause:3.10"}},
	},
}

func (s *scenario) createReplicaSet(name string, replicas int32) *appsv1.ReplicaSet {
	s.t.Helper()
	rs, err := s.createReplicaSetIn(s.ns, name, replicas)
	require.NoError(s.t, err)
	return rs
}

// createReplicaSetIn creates, in namespace ns, a ReplicaSet of replicas pods
// labelled app=name from the scenarios' pod template.
func (s *scenario) createReplicaSetIn(ns, name string, replicas int32) (*appsv1.ReplicaSet, error) {
	labels := map[string]string{"app": name}
	tmpl := *podTemplate.DeepCopy()
	tmpl.Labels = labels
	rs, err := s.client.AppsV1().ReplicaSets(ns).Create(s.ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: tmpl,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create %s/%s: %w", ns, name, err)
	}
	return rs, nil
}

// scaleReplicaSet sets the replica count through the scale subresource,
// retrying when the controller's status write got in between.
func (s *scenario) scaleReplicaSet(name string, replicas int32) {
	s.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sc, err := s.client.AppsV1().ReplicaSets(s.ns).GetScale(s.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		sc.Spec.Replicas = replicas
		_, err = s.client.AppsV1().ReplicaSets(s.ns).UpdateScale(s.ctx, name, sc, metav1.UpdateOptions{})
		return err
	})
	require.NoError(s.t, err)
}

func (s *scenario) createReplicationController(name string, replicas int32) {
	s.t.Helper()
	labels := map[string]string{"app": name}
	tmpl := podTemplate.DeepCopy()
	tmpl.Labels = labels
	_, err := s.client.CoreV1().ReplicationControllers(s.ns).Create(s.ctx, &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.ReplicationControllerSpec{Replicas: ptr.To(replicas), Selector: labels, Template: tmpl},
	}, metav1.CreateOptions{})
	require.NoError(s.t, err)
}

// waitFor polls cond until it returns true, failing the test with the last
// description cond gave when the scenario's deadline passes.
func (s *scenario) waitFor(what string, cond func() (bool, string)) {
	s.t.Helper()
	var last string
	for {
		ok, desc := cond()
		if ok {
			return
		}
		last = desc
		select {
		case <-s.ctx.Done():
			s.t.Fatalf("waiting for %s: %v; last seen: %s", what, s.ctx.Err(), last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// replicaSetSettled reports whether the ReplicaSet has observed its latest
// spec with exactly want pods that are, without a kubelet, all Pending: no
// ready and no available replicas.
func (s *scenario) replicaSetSettled(name string, want int32, pods *podWatch) func() (bool, string) {
	return s.replicaSetReady(name, want, 0, pods)
}

// replicaSetReady reports whether the ReplicaSet has observed its latest
// spec with exactly want pods, ready of them Ready and Available.
func (s *scenario) replicaSetReady(name string, want, ready int32, pods *podWatch) func() (bool, string) {
	return func() (bool, string) {
		rs, err := s.client.AppsV1().ReplicaSets(s.ns).Get(s.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		st := rs.Status
		active := pods.active(name)
		desc := fmt.Sprintf("pods=%d status=%+v generation=%d", active, st, rs.Generation)
		return active == int(want) && st.Replicas == want && st.FullyLabeledReplicas == want &&
			st.ReadyReplicas == ready && st.AvailableReplicas == ready && st.ObservedGeneration == rs.Generation, desc
	}
}

func (s *scenario) replicationControllerSettled(name string, want int32, pods *podWatch) func() (bool, string) {
	return func() (bool, string) {
		rc, err := s.client.CoreV1().ReplicationControllers(s.ns).Get(s.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		st := rc.Status
		active := pods.active(name)
		desc := fmt.Sprintf("pods=%d status=%+v generation=%d", active, st, rc.Generation)
		return active == int(want) && st.Replicas == want && st.FullyLabeledReplicas == want &&
			st.ReadyReplicas == 0 && st.AvailableReplicas == 0 && st.ObservedGeneration == rc.Generation, desc
	}
}

// lease returns the controller's Lease, or nil if there is none yet.
func (s *scenario) lease() *coordinationv1.Lease {
	s.t.Helper()
	l, err := s.client.CoordinationV1().Leases(controllerNamespace).Get(s.ctx, controllerLeaseName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	require.NoError(s.t, err)
	return l
}

// holder returns the Lease's current holder ("" when none).
func (s *scenario) holder() string {
	if l := s.lease(); l != nil && l.Spec.HolderIdentity != nil {
		return *l.Spec.HolderIdentity
	}
	return ""
}

// waitNewHolder waits until the Lease is held by someone other than old and
// returns the new holder and its acquireTime.
func (s *scenario) waitNewHolder(old string) (string, time.Time) {
	s.t.Helper()
	var holder string
	var acquired time.Time
	s.waitFor("a new lease holder", func() (bool, string) {
		l := s.lease()
		if l == nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" || *l.Spec.HolderIdentity == old {
			return false, fmt.Sprintf("%+v", l)
		}
		holder = *l.Spec.HolderIdentity
		if l.Spec.AcquireTime != nil {
			acquired = l.Spec.AcquireTime.Time
		}
		return true, ""
	})
	require.False(s.t, acquired.IsZero(), "the new holder's Lease has no acquireTime")
	return holder, acquired
}

// podWatch follows the namespace's pods through a watch and checks, on every
// event, that no owner ever has more non-terminating pods than its limit: a
// sampled over-creation check, not just a look at the end state.
type podWatch struct {
	t  testing.TB
	mu sync.Mutex
	// owner name -> names of its non-terminating pods
	pods       map[string]map[string]bool
	limits     map[string]int
	peak       map[string]int
	violations []string
	ownerOf    map[string]string // pod name -> its controller's name, for every pod seen
}

func (s *scenario) watchPods() *podWatch {
	s.t.Helper()
	w := &podWatch{t: s.t, pods: map[string]map[string]bool{}, limits: map[string]int{}, peak: map[string]int{}, ownerOf: map[string]string{}}
	factory := informers.NewSharedInformerFactoryWithOptions(s.client, 0, informers.WithNamespace(s.ns))
	inf := factory.Core().V1().Pods().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.observe(obj, false) },
		UpdateFunc: func(_, obj any) { w.observe(obj, false) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			w.observe(obj, true)
		},
	})
	require.NoError(s.t, err)
	ctx, cancel := context.WithCancel(s.ctx)
	factory.Start(ctx.Done())
	s.t.Cleanup(func() {
		cancel()
		factory.Shutdown()
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, v := range w.violations {
			s.t.Errorf("over-creation: %s", v)
		}
	})
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		s.t.Fatal("pod watch did not sync")
	}
	return w
}

// limit sets the most non-terminating pods owner may ever have.
func (w *podWatch) limit(owner string, n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.limits[owner] = n
}

func (w *podWatch) observe(obj any, deleted bool) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ownerOf[pod.Name] = ref.Name
	set := w.pods[ref.Name]
	if set == nil {
		set = map[string]bool{}
		w.pods[ref.Name] = set
	}
	if deleted || pod.DeletionTimestamp != nil {
		delete(set, pod.Name)
		return
	}
	set[pod.Name] = true
	if len(set) > w.peak[ref.Name] {
		w.peak[ref.Name] = len(set)
	}
	if limit, ok := w.limits[ref.Name]; !ok || len(set) > limit {
		w.violations = append(w.violations, fmt.Sprintf("%s has %d non-terminating pods, limit %d (set: %t)", ref.Name, len(set), limit, ok))
	}
}

func (w *podWatch) active(owner string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pods[owner])
}

func (w *podWatch) maxSeen(owner string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.peak[owner]
}

// owners maps the name of every pod seen to its controller's name.
func (w *podWatch) owners() map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.ownerOf)
}
