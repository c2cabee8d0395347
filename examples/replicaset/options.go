package replicaset

import "github.com/ctrlkit/ctrlkit/podset"

// Option configures a Controller. The options are podset's (podset.With*),
// and so are the defaults (podset.DefaultBurstReplicas, DefaultWorkers:
// kube-controller-manager's) and upstream's feature-gate names for
// podset.WithFeatureGates.
type Option = podset.Option
