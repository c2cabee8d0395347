package process

import (
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Clients are a controller's three views of one API server.
//
// Requests carries every call that must come back: writes, uncached reads
// and events, each bounded by the request timeout (rest.Config.Timeout), so
// a server that accepts a write and never answers holds a worker that long
// at most.
//
// Leases carries leader election's and ring membership's Lease calls, with
// the same timeout but a client-side rate limiter of its own: sharing the
// controller's would queue a renewal behind a burst of writes until the
// Lease lapsed, which stops the very writes that were queued.
//
// Watches feeds the informers, with no timeout: client-go applies
// rest.Config.Timeout to the whole of a request, a watch's open-ended
// stream included, so a timeout would cut every watch and make the
// informers re-watch over and over (the reflector asks the server to end
// each watch after a few minutes instead).
type Clients struct {
	Requests, Leases, Watches kubernetes.Interface
}

// NewClients builds the three from cfg, which is left unchanged.
func NewClients(cfg *rest.Config, requestTimeout time.Duration) (Clients, error) {
	requestCfg := rest.CopyConfig(cfg)
	requestCfg.Timeout = requestTimeout
	watchCfg := rest.CopyConfig(cfg)
	watchCfg.Timeout = 0
	var cs Clients
	// Each config of its own gets a rate limiter of its own.
	for _, c := range []struct {
		what string
		cfg  *rest.Config
		into *kubernetes.Interface
	}{{"API client", requestCfg, &cs.Requests}, {"API client for Leases", rest.CopyConfig(requestCfg), &cs.Leases}, {"API client for the informers", watchCfg, &cs.Watches}} {
		client, err := kubernetes.NewForConfig(c.cfg)
		if err != nil {
			return Clients{}, fmt.Errorf("%s: %w", c.what, err)
		}
		*c.into = client
	}
	return cs, nil
}

// OneClient is every view as client, for a cluster whose calls cannot hang
// and are not rate limited, such as a simulated one.
func OneClient(client kubernetes.Interface) Clients {
	return Clients{Requests: client, Leases: client, Watches: client}
}
