package prommetrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ctrlkit/ctrlkit/shard"
)

// RegisterRunner registers, on reg, what a ring member's Runner holds and
// has done: the fraction of the hash space it holds, the changes of its
// share and the epochs they started, the syncs its fence turned away, what
// its caches hold (the first Work informer as pods, the second as owners, in
// the order a set controller lists them), the ring's live members, whether
// the API server filtered its lists, and how far the other members' clocks
// are off. Each is read from the Runner when scraped.
func RegisterRunner(reg prometheus.Registerer, r *shard.Runner) error {
	if reg == nil || r == nil {
		panic("prommetrics: RegisterRunner: nil registerer or runner")
	}
	m := r.Member()
	cached := func(i int) func() float64 {
		return func() float64 {
			if c := r.Stats().Cached; len(c) > i {
				return float64(c[i])
			}
			return 0
		}
	}
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	counter := func(name, help string, f func(shard.RunnerStats) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(f(r.Stats())) })
	}
	for _, c := range []prometheus.Collector{
		gauge("ctrlkit_shard_held_fraction", "Fraction of the hash space this replica holds now (0 to 1).", func() float64 { return m.Held().Fraction() }),
		counter("ctrlkit_shard_handovers_total", "Changes of this replica's share: ranges gained or given up.", func(s shard.RunnerStats) uint64 { return s.Handovers }),
		counter("ctrlkit_shard_restarts_total", "Informer and controller starts, one per share this replica worked on.", func(s shard.RunnerStats) uint64 { return s.Epochs }),
		counter("ctrlkit_shard_fenced_syncs_total", "Syncs skipped because the owner's hash was no longer this replica's.", func(s shard.RunnerStats) uint64 { return s.FencedSyncs }),
		gauge("ctrlkit_shard_owners", "Owners in this replica's cache: those of its share.", cached(1)),
		gauge("ctrlkit_shard_pods", "Pods in this replica's cache: those of its share.", cached(0)),
		gauge("ctrlkit_shard_members", "Live members of the ring as this replica last saw them.", func() float64 { return float64(len(m.Members())) }),
		gauge("ctrlkit_shard_server_filtered", "1 when the API server filtered the last owner list by the share (ShardedListAndWatch), 0 when this client did, -1 before the first list.", func() float64 {
			s := r.Stats()
			switch {
			case !s.ServerFilterKnown:
				return -1
			case s.ServerFiltered:
				return 1
			}
			return 0
		}),
		gauge("ctrlkit_shard_peer_clock_skew_seconds", "Largest offset of another ring member's clock from this replica's that their Lease renewals prove (a lower bound). The hand-over does not depend on it; alert on it for time sync.",
			func() float64 { return m.PeerClockSkew().Seconds() }),
	} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("prommetrics: registering the ring metrics: %w", err)
		}
	}
	return nil
}
