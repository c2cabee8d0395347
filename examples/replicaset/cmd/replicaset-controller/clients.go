package main

import (
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// clients are the binary's three views of one API server.
//
// requests carries every call that must come back: writes, the uncached
// reads and events. Each of its requests is bounded by --kube-api-timeout
// (rest.Config.Timeout), so a server that accepts a write and never answers
// holds a worker for that long at most.
//
// leases carries the Lease calls of leader election and of ring
// membership, with the same timeout but a client-side rate limiter of its
// own: sharing the controller's would queue a renewal behind a burst of
// pod writes (a takeover, a scale-up of every owner) until the Lease
// lapsed, which stops the very writes that were queued. kube-controller-
// manager keeps its leader election on a client of its own for the same
// reason.
//
// watches feeds the informers. client-go applies rest.Config.Timeout to the
// whole of a request, a watch's open-ended stream included, so the same
// timeout would cut every watch after --kube-api-timeout and make the
// informers re-watch over and over; this client has none (the reflector
// asks the server to end each watch after a few minutes instead). A list
// that hangs leaves the caches unsynced, which /readyz reports.
type clients struct {
	requests kubernetes.Interface
	leases   kubernetes.Interface
	watches  kubernetes.Interface
}

// newClients builds both clients from cfg, which is left unchanged.
func newClients(cfg *rest.Config, requestTimeout time.Duration) (clients, error) {
	requestCfg := rest.CopyConfig(cfg)
	requestCfg.Timeout = requestTimeout
	requests, err := kubernetes.NewForConfig(requestCfg)
	if err != nil {
		return clients{}, fmt.Errorf("API client: %w", err)
	}
	// A config of its own gets a rate limiter of its own.
	leases, err := kubernetes.NewForConfig(rest.CopyConfig(requestCfg))
	if err != nil {
		return clients{}, fmt.Errorf("API client for Leases: %w", err)
	}
	watchCfg := rest.CopyConfig(cfg)
	watchCfg.Timeout = 0
	watches, err := kubernetes.NewForConfig(watchCfg)
	if err != nil {
		return clients{}, fmt.Errorf("API client for the informers: %w", err)
	}
	return clients{requests: requests, leases: leases, watches: watches}, nil
}

// restConfig returns the config of the cluster to manage, or nil for the
// simulated cluster. Only --kubeconfig and in-cluster config count: a
// KUBECONFIG in the environment is deliberately ignored, so that trying the
// demo can never touch the cluster a developer happens to be logged into.
// The simulated cluster is chosen only when no cluster is configured at all;
// a configuration that is there but does not load (a pod without its
// service-account token) is an error, never a silent demo.
func (o *options) restConfig() (*rest.Config, error) {
	var cfg *rest.Config
	switch {
	case o.kubeconfig != "":
		c, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("loading --kubeconfig: %w", err)
		}
		cfg = c
	case o.getenv("KUBERNETES_SERVICE_HOST") != "":
		c, err := o.inClusterCfg()
		if err != nil {
			return nil, fmt.Errorf("loading the in-cluster config (KUBERNETES_SERVICE_HOST is set): %w", err)
		}
		cfg = c
	default:
		return nil, nil
	}
	cfg.QPS = float32(o.qps)
	cfg.Burst = o.apiBurst
	cfg.UserAgent = "ctrlkit-replicaset-controller"
	return cfg, nil
}
