package unsure

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestResolveKeepsTheUnresolved(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	r := New[string](time.Minute, clk)
	r.Add("o", Write[string]{Name: "a"})
	r.Add("o", Write[string]{Name: "b", Delete: true})
	r.Add("other", Write[string]{Name: "c"})
	boom := errors.New("504")
	left, err := r.Resolve(context.Background(), "o", func(_ context.Context, w Write[string]) (bool, error) {
		if w.Name == "a" {
			return false, boom
		}
		return true, nil
	})
	assert.Equal(t, 1, left)
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, 1, r.Pending("o"))
	assert.Equal(t, 1, r.Pending("other"))

	// A write kept by Resolve keeps its age and expires with the TTL.
	clk.SetTime(clk.Now().Add(time.Minute))
	assert.Equal(t, 0, r.Pending("o"))
	var asked atomic.Int32
	left, err = r.Resolve(context.Background(), "o", func(context.Context, Write[string]) (bool, error) {
		asked.Add(1)
		return false, nil
	})
	assert.Zero(t, left)
	assert.NoError(t, err)
	assert.Zero(t, asked.Load())
}

func TestAddSweepsGoneOwners(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	r := New[string](time.Minute, clk)
	r.Add("gone", Write[string]{Name: "a"})
	clk.SetTime(clk.Now().Add(2 * time.Minute))
	r.Add("live", Write[string]{Name: "b"})
	assert.Equal(t, 1, r.Len())
	r.Forget("live")
	assert.Zero(t, r.Len())
}

func TestNamerName(t *testing.T) {
	n := NewNamer(nil)
	name := n.Name("web-")
	require.Len(t, name, len("web-")+5)
	assert.True(t, strings.HasPrefix(name, "web-"))
	assert.Len(t, n.Name(strings.Repeat("x", 80)), 63)
}

// Twenty thousand draws of five random characters repeat one about
// fourteen times on average; a Namer repeats none.
func TestNamerNeverRepeatsAName(t *testing.T) {
	n := NewNamer(nil)
	seen := map[string]bool{}
	for range 20000 {
		name := n.Name("web-")
		require.False(t, seen[name], "%s handed out twice", name)
		seen[name] = true
	}
}

func TestNamerSkipsTakenNames(t *testing.T) {
	refused := map[string]bool{}
	n := NewNamer(func(name string) bool {
		if len(refused) < 100 {
			refused[name] = true
			return true
		}
		return refused[name]
	})
	for range 1000 {
		name := n.Name("web-")
		require.False(t, refused[name], "%s was taken", name)
	}
	assert.Len(t, refused, 100)
}
