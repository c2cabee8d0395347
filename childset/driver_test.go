package childset_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/record"
	cgworkqueue "k8s.io/client-go/util/workqueue"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
	"github.com/ctrlkit/ctrlkit/simcluster"
)

// startController runs a Controller over real informers on a simulated
// cluster and returns a stop function that waits for every goroutine.
func startController(t *testing.T, cluster *simcluster.Cluster, opts ...childset.Option) (*childset.Controller[*appsv1.ReplicaSet, *v1.ConfigMap], context.CancelFunc, <-chan error) {
	t.Helper()
	client := cluster.Client()
	factory := informers.NewSharedInformerFactory(client, 0)
	rsInformer := factory.Apps().V1().ReplicaSets().Informer()
	cmInformer := factory.Core().V1().ConfigMaps().Informer()
	ctrl, err := childset.New(rsInformer, cmInformer, rsSpec{rsInformer.GetIndexer()},
		cmKind{childset.IndexerLister[*v1.ConfigMap](cmInformer.GetIndexer())}, configMapControl(client, nil), opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	factory.Start(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(ctx) }()
	stop := func() {
		cancel()
		factory.Shutdown()
	}
	return ctrl, stop, done
}

func waitForNames(t *testing.T, e *env, want []string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return slices.Equal(e.apiNames(), want), nil
	})
	if err != nil {
		t.Fatalf("API holds %v, want %v", e.apiNames(), want)
	}
}

func TestControllerRunsIndexedSetAndStops(t *testing.T) {
	cluster := simcluster.New()
	e := &env{t: t, cluster: cluster, client: cluster.Client()}
	owner := newOwner("web", 3)
	owner.UID = ""
	if _, err := e.client.AppsV1().ReplicaSets(ns).Create(context.Background(), owner, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, stop, done := startController(t, cluster, childset.WithIndexedNames(nil), childset.WithWorkers(2))
	waitForNames(t, e, names("web", 0, 1, 2))

	// Scale down, then delete a child by hand: highest index first, then
	// the lowest missing one comes back.
	rs, err := e.client.AppsV1().ReplicaSets(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	*rs.Spec.Replicas = 2
	if _, err := e.client.AppsV1().ReplicaSets(ns).Update(context.Background(), rs, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForNames(t, e, names("web", 0, 1))
	if err := e.client.CoreV1().ConfigMaps(ns).Delete(context.Background(), "web-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForNames(t, e, names("web", 0, 1))
	if n := countPrefix(e.writes(), "create web-0"); n != 2 {
		t.Errorf("web-0 created %d times, want 2 (once, and again after the manual delete)", n)
	}

	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
}

func TestControllerDrainAndRunTwice(t *testing.T) {
	cluster := simcluster.New()
	e := &env{t: t, cluster: cluster, client: cluster.Client()}
	owner := newOwner("web", 2)
	owner.UID = ""
	if _, err := e.client.AppsV1().ReplicaSets(ns).Create(context.Background(), owner, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrl, stop, done := startController(t, cluster)
	defer stop()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return len(e.apiChildren()) == 2, nil
	})
	if err != nil {
		t.Fatalf("API holds %v, want 2 children", e.apiNames())
	}
	if err := ctrl.Run(context.Background()); err == nil {
		t.Error("a second Run returned nil, want an error")
	}
	ctrl.Drain()
	ctrl.Drain()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after Drain")
	}
}

// An orphan appearing later that matches an owner's selector is adopted
// by that owner through the orphan handler.
func TestControllerAdoptsLateOrphan(t *testing.T) {
	cluster := simcluster.New()
	e := &env{t: t, cluster: cluster, client: cluster.Client()}
	owner := newOwner("web", 1)
	owner.UID = ""
	if _, err := e.client.AppsV1().ReplicaSets(ns).Create(context.Background(), owner, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, stop, done := startController(t, cluster, childset.WithIndexedNames(nil))
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	waitForNames(t, e, names("web", 0))
	orphan := newChild("stray", nil, map[string]string{"app": "web"})
	orphan.UID = ""
	if _, err := e.client.CoreV1().ConfigMaps(ns).Create(context.Background(), orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Adopted, and then deleted as the extra child holding no wanted name.
	waitForNames(t, e, names("web", 0))
	if w := e.writes(); !slices.Contains(w, "patch stray") || !slices.Contains(w, "delete stray") {
		t.Fatalf("writes %v, want stray adopted and deleted", w)
	}
}

// The driver applies Result.RequeueAfter: once a foreign holder of web-0
// goes away, nothing about web changes, and only the requested retry
// creates web-0.
func TestControllerRetriesNameConflict(t *testing.T) {
	cluster := simcluster.New()
	e := &env{t: t, cluster: cluster, client: cluster.Client()}
	foreign := newChild("web-0", nil, map[string]string{"app": "not-web"})
	foreign.UID = ""
	if _, err := e.client.CoreV1().ConfigMaps(ns).Create(context.Background(), foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	owner := newOwner("web", 2)
	owner.UID = ""
	if _, err := e.client.AppsV1().ReplicaSets(ns).Create(context.Background(), owner, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rec := record.NewFakeRecorder(100)
	_, stop, done := startController(t, cluster, childset.WithIndexedNames(nil), childset.WithNameConflictRetry(100*time.Millisecond), childset.WithEventRecorder(rec))
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	waitForNames(t, e, names("web", 0, 1)) // the foreign web-0 and a new web-1
	time.Sleep(300 * time.Millisecond)     // a few retries of the conflict
	// The test's own create of the foreign object is the only one.
	if n := countPrefix(e.writes(), "create web-0"); n != 1 {
		t.Fatalf("web-0 created while a foreign object held it: %v", e.writes())
	}
	if ev := <-rec.Events; !strings.HasPrefix(ev, "Warning "+childset.ReasonNameConflict) {
		t.Fatalf("event %q, want a NameConflict", ev)
	}
	if err := e.client.CoreV1().ConfigMaps(ns).Delete(context.Background(), "web-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		cm, err := e.client.CoreV1().ConfigMaps(ns).Get(ctx, "web-0", metav1.GetOptions{})
		return err == nil && metav1.GetControllerOf(cm) != nil && metav1.GetControllerOf(cm).Name == "web", nil
	})
	if err != nil {
		t.Fatalf("web-0 was not created by the retry: %v", e.writes())
	}
}

// namesProvider is a metrics provider that notes the queue names it is
// asked metrics for and hands back none, which the queue allows.
type namesProvider struct{ names []string }

func (p *namesProvider) NewDepthMetric(name string) cgworkqueue.GaugeMetric {
	p.names = append(p.names, name)
	return nil
}
func (*namesProvider) NewAddsMetric(string) cgworkqueue.CounterMetric           { return nil }
func (*namesProvider) NewLatencyMetric(string) cgworkqueue.HistogramMetric      { return nil }
func (*namesProvider) NewWorkDurationMetric(string) cgworkqueue.HistogramMetric { return nil }
func (*namesProvider) NewUnfinishedWorkSecondsMetric(string) cgworkqueue.SettableGaugeMetric {
	return nil
}
func (*namesProvider) NewLongestRunningProcessorSecondsMetric(string) cgworkqueue.SettableGaugeMetric {
	return nil
}
func (*namesProvider) NewRetriesMetric(string) cgworkqueue.CounterMetric { return nil }

// TestControllerQueueName: the queue is named after the owner kind unless
// WithQueueName names it, so WithMetricsProvider alone publishes metrics,
// as podset's does (an unnamed queue has none).
func TestControllerQueueName(t *testing.T) {
	for _, tc := range []struct {
		opts []childset.Option
		want string
	}{
		{nil, "replicaset"},
		{[]childset.Option{childset.WithQueueName("sets")}, "sets"},
	} {
		p := &namesProvider{}
		factory := informers.NewSharedInformerFactory(simcluster.New().Client(), 0)
		rsInformer := factory.Apps().V1().ReplicaSets().Informer()
		cmInformer := factory.Core().V1().ConfigMaps().Informer()
		ctrl, err := childset.New(rsInformer, cmInformer, rsSpec{rsInformer.GetIndexer()},
			cmKind{childset.IndexerLister[*v1.ConfigMap](cmInformer.GetIndexer())}, &objectcontrol.Fake[*v1.ConfigMap]{},
			append(tc.opts, childset.WithMetricsProvider(p))...)
		if err != nil {
			t.Fatal(err)
		}
		// Run on a done context only shuts the queue down.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = ctrl.Run(ctx)
		if !slices.Equal(p.names, []string{tc.want}) {
			t.Errorf("metrics asked for %q, want [%s]", p.names, tc.want)
		}
	}
}
