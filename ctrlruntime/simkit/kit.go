package simkit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/ctrlkit/ctrlkit/simcluster"
)

// nowhere is the REST config handed to controller-runtime where it insists
// on one. Nothing is ever sent there: the informers are built over the
// simulated cluster (newInformer), a manager's API reader is the kit's
// (NewManager), and the port is one nothing listens on, so a stray request
// (an event) fails at once instead of reaching a real server.
var nowhere = &rest.Config{Host: "http://127.0.0.1:1"}

// Kit is a controller-runtime cache and client over a simulated cluster.
type Kit struct {
	cluster *simcluster.Cluster
	scheme  *runtime.Scheme
	mapper  meta.RESTMapper
	cache   cache.Cache
	api     client.WithWatch
	client  client.Client

	makeInformer func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer
	logger       logr.Logger

	startMu sync.Mutex
	running bool // Start was called
}

// New builds a simulated cluster that stores the kinds of scheme (which
// must hold client-go's kinds as well, clientgoscheme.AddToScheme) and a
// controller-runtime cache and client over it. Nothing runs until Start.
// An error means the cache could not be built from the scheme.
func New(scheme *runtime.Scheme, opts ...Option) (*Kit, error) {
	if scheme == nil {
		panic("simkit: New: nil scheme")
	}
	var cfg config
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	cluster := cfg.shared
	if cluster == nil {
		cluster = simcluster.New(append(cfg.cluster, simcluster.WithScheme(scheme))...)
	}
	k := &Kit{
		cluster:      cluster,
		scheme:       scheme,
		mapper:       newStaticMapper(scheme, cfg.clusterScoped),
		makeInformer: cfg.newInformer,
		logger:       cfg.logger,
	}
	if k.makeInformer == nil {
		k.makeInformer = toolscache.NewSharedIndexInformer
	}
	c, err := cache.New(nowhere, cache.Options{Scheme: scheme, Mapper: k.mapper, NewInformer: k.newInformer})
	if err != nil {
		return nil, fmt.Errorf("simkit: building the cache: %w", err)
	}
	k.cache = c
	k.api = fake.NewClientBuilder().
		WithScheme(scheme).
		WithRESTMapper(k.mapper).
		WithObjectTracker(clusterTracker{k.cluster.Tracker()}).
		WithStatusSubresource(cfg.statusKinds...).
		Build()
	k.client = cachedReads{WithWatch: k.api, cache: c}
	return k, nil
}

// Cluster is the simulated cluster: HoldWatches, Add, its clientset.
func (k *Kit) Cluster() *simcluster.Cluster { return k.cluster }

// Scheme is the scheme the kit was built with.
func (k *Kit) Scheme() *runtime.Scheme { return k.scheme }

// RESTMapper maps every kind of the scheme, without discovery.
func (k *Kit) RESTMapper() meta.RESTMapper { return k.mapper }

// Cache is the controller-runtime cache: informers over the cluster's
// watches, which HoldWatches holds back.
func (k *Kit) Cache() cache.Cache { return k.cache }

// Client is what a manager's GetClient is: reads (Get, List) from the
// cache, writes to the cluster, which fills in generated names, UIDs and
// resourceVersions and refuses what an apiserver refuses (a conflicting
// resourceVersion, two controller references).
func (k *Kit) Client() client.Client { return k.client }

// APIReader reads from the cluster directly, as a manager's GetAPIReader
// does; it also watches (client.WithWatch).
func (k *Kit) APIReader() client.WithWatch { return k.api }

// HoldWatches holds back the watch events of obj's kind (the kind of an
// empty &Worker{}, or of an unstructured object's apiVersion and kind) until
// release is called: the cache stops seeing writes of that kind, which the
// client and the APIReader still make and read. See
// simcluster.Cluster.HoldWatches. A kind the scheme does not know panics.
func (k *Kit) HoldWatches(obj client.Object) (release func()) {
	gvk, err := apiutil.GVKForObject(obj, k.scheme)
	if err != nil {
		panic(fmt.Sprintf("simkit: HoldWatches: %v", err))
	}
	mapping, err := k.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		panic(fmt.Sprintf("simkit: HoldWatches: %v", err))
	}
	return k.cluster.HoldWatches(mapping.Resource)
}

// Start runs the cache until ctx is done and returns once its informers
// have stopped, as a manager runs its cache. It may be called once.
func (k *Kit) Start(ctx context.Context) error {
	k.startMu.Lock()
	if k.running {
		k.startMu.Unlock()
		return errors.New("simkit: Start called twice")
	}
	k.running = true
	k.startMu.Unlock()
	return k.cache.Start(ctx)
}

// StartTest starts the cache for a test and returns, once the cache runs, a
// context that ends with the test: at cleanup it is cancelled and the
// cache's informers have stopped before the next cleanup runs, so goleak
// stays quiet. Informers of the kinds the test reads start on first use and
// are synced before the read returns. A kit already started fails the test.
func (k *Kit) StartTest(tb testing.TB) context.Context {
	tb.Helper()
	return startForTest(tb, "StartTest", "the cache", k.Start, k.cache.WaitForCacheSync)
}

// startForTest runs start until the test ends and returns, once synced
// says so, the context it runs under; at cleanup the context is cancelled
// and start has returned, and an error it returns fails the test. A start
// that fails at once fails the test there (synced would never answer).
func startForTest(tb testing.TB, caller, what string, start func(context.Context) error, synced func(context.Context) bool) context.Context {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- start(ctx) }()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("simkit: %s stopped with %v", what, err)
		}
	})
	ready := make(chan bool, 1)
	go func() { ready <- synced(ctx) }()
	select {
	case ok := <-ready:
		if !ok {
			tb.Fatalf("simkit: %s: %s never synced", caller, what)
		}
	case err := <-done:
		done <- nil // reported here, not again at cleanup
		cancel()
		<-ready
		tb.Fatalf("simkit: %s: %v", caller, err)
	}
	return ctx
}
