package main

import (
	"github.com/prometheus/client_golang/prometheus"
)

// ringMetrics is what a replica of a ring (--shard-ring) publishes on
// /metrics besides the controller's own: how much of the hash space it
// holds, how often its share changed, what its caches hold, and how far the
// other replicas' clocks are off.
type ringMetrics struct {
	held      prometheus.Gauge
	handovers prometheus.Counter
	epochs    prometheus.Counter
	fenced    prometheus.Counter
}

func newRingMetrics(reg *prometheus.Registry, r *ringRunner) (*ringMetrics, error) {
	m := &ringMetrics{
		held: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ctrlkit_shard_held_fraction",
			Help: "Fraction of the hash space this replica holds now (0 to 1).",
		}),
		handovers: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ctrlkit_shard_handovers_total",
			Help: "Changes of this replica's share: ranges gained or given up.",
		}),
		epochs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ctrlkit_shard_restarts_total",
			Help: "Informer and controller starts, one per share this replica worked on.",
		}),
		fenced: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ctrlkit_shard_fenced_syncs_total",
			Help: "Syncs skipped because the owner's hash was no longer this replica's.",
		}),
	}
	owners := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "ctrlkit_shard_owners",
		Help: "Owners in this replica's cache: those of its share.",
	}, func() float64 { o, _ := r.cached(); return float64(o) })
	pods := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "ctrlkit_shard_pods",
		Help: "Pods in this replica's cache: those of its share.",
	}, func() float64 { _, p := r.cached(); return float64(p) })
	members := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "ctrlkit_shard_members",
		Help: "Live members of the ring as this replica last saw them.",
	}, func() float64 { return float64(len(r.member.Members())) })
	server := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "ctrlkit_shard_server_filtered",
		Help: "1 when the API server filtered the last owner list by the share (ShardedListAndWatch), 0 when this client did, -1 before the first list.",
	}, r.serverFiltered)
	skew := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "ctrlkit_shard_peer_clock_skew_seconds",
		Help: "Largest offset of another ring member's clock from this replica's that their Lease renewals prove (a lower bound). The hand-over does not depend on it; alert on it for time sync.",
	}, func() float64 { return r.member.PeerClockSkew().Seconds() })
	for _, c := range []prometheus.Collector{m.held, m.handovers, m.epochs, m.fenced, owners, pods, members, server, skew} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
