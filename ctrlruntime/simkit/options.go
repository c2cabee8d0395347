package simkit

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlkit/ctrlkit/simcluster"
)

// Option configures New. A nil Option is ignored.
type Option func(*config)

type config struct {
	cluster       []simcluster.Option
	statusKinds   []client.Object
	clusterScoped []schema.GroupKind
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
