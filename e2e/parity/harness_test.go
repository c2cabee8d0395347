package parity

import (
	"flag"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// defaultCases is the number of random cases per target in a plain
// `go test`; CI runs exactly this. It keeps the whole package well under
// three minutes on two cores without -race.
const defaultCases = 100_000

// longCases is what -long asks for: ten times the CI figure.
const longCases = 1_000_000

var (
	longFlag = flag.Bool("long", false, "run "+strconv.Itoa(longCases)+" cases per differential target instead of "+strconv.Itoa(defaultCases))
	seedFlag = flag.Uint64("parity.seed", 0, "seed of the random cases (0: CTRLKIT_PARITY_SEED or the fixed default)")
)

// defaultSeed is fixed so that CI is reproducible; change it with -parity.seed
// or CTRLKIT_PARITY_SEED to explore other inputs.
const defaultSeed = 20260101

// numCases returns how many cases a target runs: CTRLKIT_PARITY_CASES wins,
// then -long, then the CI default. Under -race the default shrinks tenfold,
// because the race detector makes the upstream side ~10x slower and the
// differential value is in the count without -race.
func numCases(t testing.TB) int {
	t.Helper()
	if v := os.Getenv("CTRLKIT_PARITY_CASES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("CTRLKIT_PARITY_CASES=%q: want a positive integer", v)
		}
		return n
	}
	if *longFlag {
		return longCases
	}
	if raceEnabled || testing.Short() {
		return defaultCases / 10
	}
	return defaultCases
}

// seed returns the run's seed and logs it, so a failure can be replayed.
func seed(t testing.TB) uint64 {
	t.Helper()
	s := uint64(defaultSeed)
	if v := os.Getenv("CTRLKIT_PARITY_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("CTRLKIT_PARITY_SEED=%q: %v", v, err)
		}
		s = n
	}
	if *seedFlag != 0 {
		s = *seedFlag
	}
	return s
}

// caseRand gives case i of a target its own generator, so that one case can
// be regenerated from (seed, target, i) alone without replaying the others.
func caseRand(seed uint64, target string, i int) *rand.Rand {
	h := uint64(14695981039346656037)
	for _, c := range []byte(target) {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return rand.New(rand.NewPCG(seed^h, uint64(i)))
}

// runCases drives one differential target: it generates n cases, checks each,
// and on the first mismatch shrinks the input and fails with the minimal one.
// check returns "" when both implementations agree, or a description of the
// mismatch. skip reports whether a case falls under a documented deliberate
// difference; skipped cases are counted and logged, never silently dropped.
type target[C any] struct {
	name string
	gen  func(r *rand.Rand) C
	skip func(C) (string, bool) // predicate name, whether to skip
	// domain, if set, is the input space the generator promises (for
	// example distinct instants). A generated case outside it is a generator
	// bug and fails the test; shrinking never leaves it.
	domain   func(C) bool
	check    func(C) string
	shrink   func(C) []C // smaller candidates, simplest first
	describe func(C) string
	// divisor, if set, divides the case count, for targets whose single case
	// costs about a millisecond (a full spew dump of a PodSpec, a fake
	// clientset per case): they run a tenth as many cases, 100k under -long.
	divisor int
}

func (tg target[C]) run(t *testing.T) {
	t.Helper()
	n, s := numCases(t), seed(t)
	if tg.divisor > 1 {
		n = max(1, n/tg.divisor)
	}
	skipped := map[string]int{}
	for i := 0; i < n; i++ {
		c := tg.gen(caseRand(s, tg.name, i))
		if tg.domain != nil && !tg.domain(c) {
			t.Fatalf("%s: generator bug: case %d is outside the promised domain:\n%s", tg.name, i, tg.describe(c))
		}
		if tg.skip != nil {
			if pred, ok := tg.skip(c); ok {
				skipped[pred]++
				continue
			}
		}
		msg := tg.check(c)
		if msg == "" {
			continue
		}
		small, smallMsg := c, msg
		if tg.shrink != nil {
			small, smallMsg = minimize(c, msg, tg)
		}
		t.Fatalf("%s: mismatch at case %d (seed %d; replay with CTRLKIT_PARITY_SEED=%d)\n%s\nminimal failing input:\n%s",
			tg.name, i, s, s, smallMsg, tg.describe(small))
	}
	total := 0
	for _, v := range skipped {
		total += v
	}
	t.Logf("%s: %d cases, %d compared, skipped by predicate: %v", tg.name, n, n-total, skipped)
	if total > n/2 {
		t.Errorf("%s: %d of %d cases skipped; the generator no longer exercises the target", tg.name, total, n)
	}
}

// minimize greedily replaces the failing case by the first smaller candidate
// that still fails (and is not skipped), until no candidate fails.
func minimize[C any](c C, msg string, tg target[C]) (C, string) {
	for step := 0; step < 10_000; step++ {
		improved := false
		for _, cand := range tg.shrink(c) {
			if tg.domain != nil && !tg.domain(cand) {
				continue
			}
			if tg.skip != nil {
				if _, ok := tg.skip(cand); ok {
					continue
				}
			}
			if m := tg.check(cand); m != "" {
				c, msg, improved = cand, m, true
				break
			}
		}
		if !improved {
			break
		}
	}
	return c, msg
}

// removeEach returns the slices obtained by dropping one element of xs.
func removeEach[T any](xs []T) [][]T {
	out := make([][]T, 0, len(xs))
	for i := range xs {
		c := make([]T, 0, len(xs)-1)
		c = append(c, xs[:i]...)
		c = append(c, xs[i+1:]...)
		out = append(out, c)
	}
	return out
}

func oneOf[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }
