package benchpair

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOrderFollowsTheRound(t *testing.T) {
	t.Setenv("CTRLKIT_BENCH_ROUND", "1")
	assert.Equal(t, []string{"ctrlkit", "upstream"}, Order(t, "ctrlkit", "upstream"))
	assert.Equal(t, []string{"ctrlkit", "upstream"}, Order(t, "ctrlkit", "upstream"), "the same round keeps its order")
	t.Setenv("CTRLKIT_BENCH_ROUND", "2")
	assert.Equal(t, []string{"upstream", "ctrlkit"}, Order(t, "ctrlkit", "upstream"))
}

func TestOrderAlternatesWithoutARound(t *testing.T) {
	t.Setenv("CTRLKIT_BENCH_ROUND", "")
	first := Order(t, 1, 2)
	assert.ElementsMatch(t, []int{1, 2}, first)
	assert.Equal(t, []int{first[1], first[0]}, Order(t, 1, 2))
}

func TestRound(t *testing.T) {
	t.Setenv(EnvRound, "")
	assert.Zero(t, Round(t))
	t.Setenv(EnvRound, "3")
	assert.Equal(t, 3, Round(t))
	for _, bad := range []string{"x", "-1"} {
		t.Setenv(EnvRound, bad)
		tb := &fatalRecorder{TB: t}
		func() {
			defer func() { _ = recover() }()
			Round(tb)
		}()
		assert.True(t, tb.failed, "%s=%q is rejected", EnvRound, bad)
	}
}

// fatalRecorder records Fatalf instead of ending the test.
type fatalRecorder struct {
	testing.TB
	failed bool
}

func (r *fatalRecorder) Fatalf(string, ...any) {
	r.failed = true
	panic("fatal")
}

func TestRunFollowsTheRound(t *testing.T) {
	t.Setenv("CTRLKIT_BENCH_ROUND", "2")
	var ran []string
	record := func(half string) func(b *testing.B) {
		return func(*testing.B) {
			if len(ran) == 0 || ran[len(ran)-1] != half {
				ran = append(ran, half)
			}
		}
	}
	testing.Benchmark(func(b *testing.B) {
		if len(ran) == 0 {
			Run(b, "n=1/", "clientgo", record("ctrlkit"), record("clientgo"))
		}
	})
	assert.Equal(t, []string{"clientgo", "ctrlkit"}, ran)
}
