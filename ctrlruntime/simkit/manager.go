package simkit

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// NewManager returns a controller-runtime manager over the kit: its scheme,
// RESTMapper, cache (GetCache) and client (GetClient) are the kit's, so
// controllers built with its builder read a cache HoldWatches can hold and
// write to the simulated cluster. opts configures the rest, with these
// changes: the metrics server is off unless opts.Metrics.BindAddress asks
// for one, leader election is off (there is no Lease store to elect
// through), and controller names are not checked for uniqueness unless
// opts.Controller.SkipNameValidation says otherwise (each test builds its
// controllers again, under the same names, in one process). The manager
// starts the kit's cache: do not also call Start or StartTest; for a test,
// StartManagerTest runs it.
//
// GetAPIReader is the kit's APIReader, so a controller that reads live
// before it adopts (childsetcr, podsetcr) works as against an API server.
// The manager logs through opts.Logger, or when that is unset the kit's
// WithLogger (TestLogger shows reconcile errors in the test's log). Events
// from GetEventRecorderFor are stored in the simulated cluster, where a
// test lists them as core/v1 Events (controller-runtime's newer
// GetEventRecorder, which ctrlkit does not use, still talks to no server).
func (k *Kit) NewManager(opts manager.Options) (manager.Manager, error) {
	opts.Scheme = k.scheme
	opts.MapperProvider = func(*rest.Config, *http.Client) (meta.RESTMapper, error) { return k.mapper, nil }
	opts.NewCache = func(*rest.Config, cache.Options) (cache.Cache, error) { return k.cache, nil }
	opts.NewClient = func(*rest.Config, client.Options) (client.Client, error) { return k.client, nil }
	if opts.Metrics.BindAddress == "" {
		opts.Metrics.BindAddress = "0"
	}
	opts.LeaderElection = false
	if opts.Controller.SkipNameValidation == nil {
		opts.Controller.SkipNameValidation = ptr.To(true)
	}
	if opts.Logger.GetSink() == nil && k.logger.GetSink() != nil {
		opts.Logger = k.logger
	}
	mgr, err := manager.New(nowhere, opts)
	if err != nil {
		return nil, err
	}
	ev := &events{kit: k}
	if err := mgr.Add(manager.RunnableFunc(ev.stopWith)); err != nil {
		return nil, fmt.Errorf("simkit: adding the event recorder: %w", err)
	}
	return kitManager{Manager: mgr, apiReader: k.api, events: ev}, nil
}

// StartManagerTest starts mgr, a manager from NewManager, for a test and
// returns, once its cache is synced, a context that ends with the test: at
// cleanup it is cancelled and the manager has stopped, with no error,
// before the next cleanup runs, so goleak stays quiet.
func StartManagerTest(tb testing.TB, mgr manager.Manager) context.Context {
	tb.Helper()
	return startForTest(tb, "StartManagerTest", "the manager", mgr.Start, mgr.GetCache().WaitForCacheSync)
}

// ManagerTest is New, NewManager and StartManagerTest in one call, for the
// usual test of a controller on a lagging cache: it builds a kit over a
// scheme of client-go's kinds and addToScheme's (nil: none more), with
// opts applied after WithLogger(TestLogger(tb)), so a WithLogger of theirs
// wins, and a manager over it; lets setup add the controllers under test;
// and starts the manager for the test. It returns the kit, whose
// HoldWatches makes the cache lag, and the context StartManagerTest
// returns. An error of any step fails the test.
func ManagerTest(tb testing.TB, addToScheme func(*runtime.Scheme) error, setup func(manager.Manager) error, opts ...Option) (*Kit, context.Context) {
	tb.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		tb.Fatalf("simkit: ManagerTest: %v", err)
	}
	if addToScheme != nil {
		if err := addToScheme(scheme); err != nil {
			tb.Fatalf("simkit: ManagerTest: %v", err)
		}
	}
	kit, err := New(scheme, append([]Option{WithLogger(TestLogger(tb))}, opts...)...)
	if err != nil {
		tb.Fatalf("simkit: ManagerTest: %v", err)
	}
	mgr, err := kit.NewManager(manager.Options{})
	if err != nil {
		tb.Fatalf("simkit: ManagerTest: %v", err)
	}
	if err := setup(mgr); err != nil {
		tb.Fatalf("simkit: ManagerTest: setting up: %v", err)
	}
	return kit, StartManagerTest(tb, mgr)
}

// kitManager is a manager whose API reader and event recorders are the
// kit's: controller-runtime builds its own from the REST config, which
// reaches no server here, and offers no option to replace them.
type kitManager struct {
	manager.Manager
	apiReader client.Reader
	events    *events
}

// GetAPIReader reads the simulated cluster directly.
func (m kitManager) GetAPIReader() client.Reader { return m.apiReader }

// GetEventRecorderFor records events into the simulated cluster.
func (m kitManager) GetEventRecorderFor(name string) record.EventRecorder {
	return m.events.recorderFor(name)
}
