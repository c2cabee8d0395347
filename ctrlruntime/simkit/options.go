package simkit

import (
	"time"

	"github.com/go-logr/logr"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlkit/ctrlkit/simcluster"
)

// Option configures New. A nil Option is ignored.
type Option func(*config)

type config struct {
	cluster       []simcluster.Option
	statusKinds   []client.Object
	clusterScoped []schema.GroupKind
	shared        *simcluster.Cluster
	newInformer   func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer
	logger        logr.Logger
}

// WithClusterOptions passes options to the simulated cluster New builds
// (nodes, scheduler, kubelet, clock). simcluster.WithScheme is set by New.
func WithClusterOptions(opts ...simcluster.Option) Option {
	return func(c *config) { c.cluster = append(c.cluster, opts...) }
}

// WithStatusSubresource declares kinds that have a status subresource, as
// a CRD's subresources.status does: the client's Update leaves their
// status alone and Status().Update writes only it. Built-in kinds with a
// status subresource need no declaration.
func WithStatusSubresource(objs ...client.Object) Option {
	return func(c *config) { c.statusKinds = append(c.statusKinds, objs...) }
}

// WithClusterScoped declares custom kinds that are cluster-scoped; every
// other custom kind of the scheme is namespaced. client-go's cluster-scoped
// kinds (Node, Namespace, PersistentVolume, ClusterRole, ...) are known.
func WithClusterScoped(kinds ...schema.GroupKind) Option {
	return func(c *config) { c.clusterScoped = append(c.clusterScoped, kinds...) }
}

// WithCluster builds the kit over an existing simulated cluster, another
// kit's Cluster(), instead of a new one: two kits over one cluster are two
// replicas of a controller, each with its own cache and client, writing to
// the same store. The cluster must store the kinds of New's scheme;
// WithClusterOptions is ignored. nil means a new cluster.
func WithCluster(c *simcluster.Cluster) Option {
	return func(cfg *config) { cfg.shared = c }
}

// WithNewInformer builds the cache's informers with newInformer, given the
// kit's list-watch over the cluster, instead of client-go's
// NewSharedIndexInformer: the hook of cache.Options.NewInformer, for a
// test of code that wraps it. nil means client-go's.
func WithNewInformer(newInformer func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer) Option {
	return func(cfg *config) { cfg.newInformer = newInformer }
}

// WithLogger is the logger of the managers NewManager builds when their
// options set none: controller-runtime logs every reconcile error there
// ("Reconciler error"), which otherwise goes nowhere. TestLogger(tb) writes
// to the test's log. The zero logr.Logger means controller-runtime's
// default.
func WithLogger(logger logr.Logger) Option {
	return func(cfg *config) { cfg.logger = logger }
}
