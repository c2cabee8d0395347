// Package benchpair runs the two halves of a benchmark pair, ctrlkit's and
// the implementation it is measured against, first one and then the other
// in alternate rounds, so that over an even number of rounds neither half
// always meets the machine first. The halves are named prefix+"impl=ctrlkit"
// and prefix+"impl="+base, which benchstat pairs with -col /impl.
//
// A round is a process: `make bench` numbers them in CTRLKIT_BENCH_ROUND,
// and odd rounds run ctrlkit first. Without it, each call of Order or Run
// counts as the next round.
package benchpair

import (
	"os"
	"strconv"
	"sync/atomic"
	"testing"
)

// EnvRound names the environment variable that holds the round.
const EnvRound = "CTRLKIT_BENCH_ROUND"

var calls atomic.Int64

// Round returns this process's round from EnvRound, and 0 when it is unset.
// Any value but a non-negative integer fails tb.
func Round(tb testing.TB) int {
	round, _ := lookupRound(tb)
	return round
}

func lookupRound(tb testing.TB) (int, bool) {
	v, set := os.LookupEnv(EnvRound)
	if !set || v == "" {
		return 0, false
	}
	round, err := strconv.Atoi(v)
	if err != nil || round < 0 {
		tb.Fatalf("%s=%q: want a round index >= 0", EnvRound, v)
	}
	return round, true
}

// Order returns ctrlkit and other in this round's order.
func Order[T any](tb testing.TB, ctrlkit, other T) []T {
	round, set := lookupRound(tb)
	if !set {
		round = int(calls.Add(1))
	}
	if round%2 == 0 {
		return []T{other, ctrlkit}
	}
	return []T{ctrlkit, other}
}

// Run runs ctrlkit's half and the other as sub-benchmarks of b, in this
// round's order.
func Run(b *testing.B, prefix, base string, ctrlkit, other func(b *testing.B)) {
	type half struct {
		name string
		run  func(b *testing.B)
	}
	for _, h := range Order(b, half{"ctrlkit", ctrlkit}, half{base, other}) {
		b.Run(prefix+"impl="+h.name, h.run)
	}
}
