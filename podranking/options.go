package podranking

import (
	"time"

	"k8s.io/utils/clock"
)

// Option configures a Selector.
type Option func(*config)

type config struct {
	clock       clock.PassiveClock
	now         time.Time
	fixedNow    bool
	disableCost bool
	disableLog  bool
	first, last []Ranker
}

// WithClock sets the clock whose Now is the reference for logarithmic
// scale-down. The default is the real clock. A nil clock is ignored.
func WithClock(c clock.PassiveClock) Option {
	return func(cfg *config) {
		if c != nil {
			cfg.clock = c
		}
	}
}

// WithNow pins the reference time. A zero time turns log scaling off and
// compares times plainly, as upstream does with a zero Now.
func WithNow(now time.Time) Option {
	return func(cfg *config) { cfg.now, cfg.fixedNow = now, true }
}

// WithoutDeletionCost ignores the pod-deletion-cost annotation, as upstream
// does with the PodDeletionCost feature gate off.
func WithoutDeletionCost() Option {
	return func(cfg *config) { cfg.disableCost = true }
}

// WithoutLogarithmicScaleDown compares ready and creation times plainly
// (more recent first, no buckets, no UID tie-break), as upstream did before
// the LogarithmicScaleDown gate went GA.
func WithoutLogarithmicScaleDown() Option {
	return func(cfg *config) { cfg.disableLog = true }
}

// WithRankersFirst puts rankers in front of the built-in rules, in the order
// given; a later call appends. Nil rankers are ignored.
func WithRankersFirst(r ...Ranker) Option {
	return func(cfg *config) { cfg.first = appendRankers(cfg.first, r) }
}

// WithRankersLast puts rankers behind the built-in rules, in the order given;
// they only decide between pods every built-in rule finds equivalent.
func WithRankersLast(r ...Ranker) Option {
	return func(cfg *config) { cfg.last = appendRankers(cfg.last, r) }
}

func appendRankers(dst, src []Ranker) []Ranker {
	for _, r := range src {
		if r != nil {
			dst = append(dst, r)
		}
	}
	return dst
}

func (cfg *config) policy() policy {
	now := cfg.now
	if !cfg.fixedNow {
		now = cfg.clock.Now()
	}
	return newPolicy(now, cfg.disableCost, cfg.disableLog)
}
