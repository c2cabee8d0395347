package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	crpodgroup "github.com/ctrlkit/ctrlkit/ctrlruntime/examples/podgroup"
	"github.com/ctrlkit/ctrlkit/examples/podgroup"
	"github.com/ctrlkit/ctrlkit/expectations"
)

// TestPodGroupScaleUnderManager runs the PodGroup controller of
// ctrlruntime/examples/podgroup in two controller-runtime managers competing
// for one lease, with the metrics endpoint, scales a group 0 -> 200 -> 20,
// and checks that only the leader ran the controller, that no group ever
// held more non-terminating pods than asked for, that exactly the 200 pods
// needed were created, and that the work queue's metrics reached the
// manager's /metrics.
func TestPodGroupScaleUnderManager(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg, closeIdle, err := env.ClientConfig(nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		// HTTP/2 connections wind down after their last stream; close idle
		// ones until none is left or the grace period ends.
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			closeIdle()
			if goleak.Find(ignore) == nil {
				break
			}
		}
		goleak.VerifyNone(t, ignore)
	})
	client, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)

	require.NoError(t, env.InstallCRDsFromYAML(ctx, podgroup.CRD))
	created, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "podgroup-cr-"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	ns := created.Name
	groups := dyn.Resource(podgroup.Resource).Namespace(ns)

	// The sampler watches with the test's own client, from before the group
	// exists.
	sampler := &overCreationSampler{}
	stopSampler := make(chan struct{})
	podFactory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
	groupFactory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, ns, nil)
	for _, inf := range []cache.SharedIndexInformer{
		podFactory.Core().V1().Pods().Informer(),
		groupFactory.ForResource(podgroup.Resource).Informer(),
	} {
		_, err := inf.AddEventHandler(sampler.handler())
		require.NoError(t, err)
	}
	podFactory.Start(stopSampler)
	groupFactory.Start(stopSampler)
	defer func() {
		close(stopSampler)
		podFactory.Shutdown()
		groupFactory.Shutdown()
	}()
	podFactory.WaitForCacheSync(stopSampler)
	groupFactory.WaitForCacheSync(stopSampler)

	// Two instances compete for the lease; only the leader may run the
	// controller, or the two would over-create.
	metricsAddr := freeAddress(t)
	// The leader's cache is restricted to the namespace, which keeps an
	// informer per namespace, and the follower's is cluster-wide, so both
	// of podsetcr's ways to read are run.
	stopManager, managerFailed, leader := startManager(t, cfg, ns, metricsAddr, true)
	defer stopManager()
	stopFollower, followerFailed, follower := startManager(t, cfg, ns, "0", false)
	defer stopFollower()

	tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.k8s.io/pause:3.10"}}},
	})
	require.NoError(t, err)
	_, err = groups.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": podgroup.Resource.GroupVersion().String(), "kind": "PodGroup",
		"metadata": map[string]any{"name": "web"},
		"spec": map[string]any{
			"replicas": int64(0),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": tmpl,
		},
	}}, metav1.CreateOptions{})
	require.NoError(t, err)

	start := time.Now()
	for _, step := range []int64{0, 200, 20} {
		stepStart := time.Now()
		require.NoError(t, scale(ctx, groups, step))
		require.NoError(t, waitFor(3*time.Minute, func() (bool, error) {
			if err := errors.Join(managerFailed(), followerFailed()); err != nil {
				return false, fmt.Errorf("%w: %w", errGiveUp, err)
			}
			return settled(ctx, client, groups, ns, step)
		}), "PodGroup web never settled at %d pods", step)
		t.Logf("scaled to %d in %s", step, time.Since(stepStart).Round(time.Millisecond))
	}
	elapsed := time.Since(start)

	// The queue drains once every event of the scale-down was synced.
	var adds, depth float64
	require.NoError(t, waitFor(30*time.Second, func() (bool, error) {
		m, err := scrape(ctx, "http://"+metricsAddr+"/metrics")
		if err != nil {
			return false, err
		}
		adds = m[`workqueue_adds_total{controller="podgroup",name="podgroup"}`]
		// controller-runtime's own queue: with its priority queue (the
		// default) there is a depth series per priority; add them up.
		var found bool
		depth = 0
		for k, v := range m {
			if strings.HasPrefix(k, `workqueue_depth{controller="podgroup",name="podgroup"`) {
				depth, found = depth+v, true
			}
		}
		if !found {
			return false, errors.New("no workqueue_depth series for podgroup")
		}
		return adds > 0 && depth == 0, fmt.Errorf("adds %v, depth %v", adds, depth)
	}), "workqueue metrics of podgroup on the manager's /metrics")

	// Only the leader's controller starts, and so only it observes pod
	// events: the follower's core never expected or saw a creation.
	web, err := groups.Get(ctx, "web", metav1.GetOptions{})
	require.NoError(t, err)
	_, leaderSaw := leader.Core().Expectations().Pending(expectations.OwnerKeyFor(web))
	_, followerSaw := follower.Core().Expectations().Pending(expectations.OwnerKeyFor(web))
	require.True(t, leaderSaw, "the leader ran the controller")
	require.False(t, followerSaw, "the follower ran the controller")
	require.NoError(t, leader.ReadyzCheck(nil), "the first instance has its informers synced")

	rep := sampler.replay()
	t.Logf("podgroup under controller-runtime: 0 -> 200 -> 20 in %s; pods created %d, max active %d, max over-creation %d, samples %d (of %d events); workqueue_adds_total %v, workqueue_depth %v",
		elapsed.Round(time.Millisecond), rep.Created, rep.MaxActive, rep.MaxExcess, rep.Samples, rep.EventsTotal, adds, depth)
	require.Empty(t, rep.Violations, "over-creation at sampled instants")
	require.Zero(t, rep.MaxExcess)
	require.Equal(t, 200, rep.Created, "exactly the pods the scale-up needed were created")
	require.Equal(t, 200, rep.MaxActive)
	require.GreaterOrEqual(t, rep.Samples, 200)
}

// startManager runs a manager with leader election (its lease in ns), the
// metrics endpoint on metricsAddr ("0" for none) and the PodGroup
// controller. It waits up to 2 s for the manager to be elected, so that the
// first instance started is the leader. The cache is cluster-wide, or with
// restricted restricted to ns. stop stops the manager and waits for it;
// failed reports an error the manager stopped with early.
func startManager(t *testing.T, cfg *rest.Config, ns, metricsAddr string, restricted bool) (stop func(), failed func() error, c *crpodgroup.Controller) {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	require.NoError(t, crpodgroup.AddToScheme(scheme))
	var cacheOpts crcache.Options
	if restricted {
		cacheOpts.DefaultNamespaces = map[string]crcache.Config{ns: {}}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Cache:                         cacheOpts,
		Scheme:                        scheme,
		Logger:                        logr.Discard(),
		Metrics:                       metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress:        "0",
		LeaderElection:                true,
		LeaderElectionID:              "podgroup-e2e",
		LeaderElectionNamespace:       ns,
		LeaderElectionReleaseOnCancel: true,
		// Two managers in one test process register the same controller
		// name; in a deployment each runs in its own process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	require.NoError(t, err)
	c, err = crpodgroup.SetupWithManager(mgr)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var result error
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	failed = func() error {
		if !stopped {
			select {
			case result = <-done:
				stopped = true
			default:
			}
		}
		if stopped && result == nil {
			return errors.New("manager stopped")
		}
		return result
	}
	stop = func() {
		cancel()
		if !stopped {
			select {
			case result = <-done:
				stopped = true
			case <-time.After(time.Minute):
				t.Error("manager did not stop within a minute")
				return
			}
		}
		require.NoError(t, result, "manager")
	}
	// The first manager elected is the one whose controller creates pods.
	select {
	case <-mgr.Elected():
	case <-time.After(2 * time.Second):
	}
	return stop, failed, c
}

// scale sets spec.replicas of group web, retrying when a status write of
// the controller got in between the read and the update.
func scale(ctx context.Context, groups dynamic.ResourceInterface, replicas int64) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := groups.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := unstructured.SetNestedField(cur.Object, replicas, "spec", "replicas"); err != nil {
			return err
		}
		_, err = groups.Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

// settled reports whether group web holds want non-terminating pods and
// its status says so for its current generation.
func settled(ctx context.Context, client kubernetes.Interface, groups dynamic.ResourceInterface, ns string, want int64) (bool, error) {
	pg, err := groups.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	replicas, _, _ := unstructured.NestedInt64(pg.Object, "status", "replicas")
	observed, _, _ := unstructured.NestedInt64(pg.Object, "status", "observedGeneration")
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		return false, err
	}
	active := 0
	for i := range pods.Items {
		p := &pods.Items[i]
		if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == pg.GetUID() && p.DeletionTimestamp == nil {
			active++
		}
	}
	return int64(active) == want && replicas == want && observed == pg.GetGeneration(),
		fmt.Errorf("%d active pods, status.replicas %d at generation %d of %d, want %d", active, replicas, observed, pg.GetGeneration(), want)
}

// freeAddress returns a loopback address nothing listens on now.
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// scrape reads a Prometheus text exposition into series -> value, the
// series written as it appears (name and sorted labels).
func scrape(ctx context.Context, url string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	series := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		series[line[:i]] = v
	}
	return series, sc.Err()
}
