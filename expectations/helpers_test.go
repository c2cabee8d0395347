package expectations

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	clocktesting "k8s.io/utils/clock/testing"
)

// upstreamTestTime is the fake clock start used by upstream's tests.
var upstreamTestTime = time.Date(2009, time.November, 10, 23, 0, 0, 0, time.UTC)

// logSink collects formatted log lines.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (l *logSink) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, strings.TrimSpace(prefix+" "+args))
	}, funcr.Options{Verbosity: 10})
}

func (l *logSink) matching(substr string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return out
}

func newTestCache(t *testing.T, ttl time.Duration) (*ControllerExpectations, *clocktesting.FakeClock, *logSink) {
	t.Helper()
	clk := clocktesting.NewFakeClock(upstreamTestTime)
	logs := &logSink{}
	opts := []Option{WithClock(clk), WithLogger(logs.logger())}
	if ttl > 0 {
		opts = append(opts, WithTTL(ttl))
	}
	return NewControllerExpectations(opts...), clk, logs
}

func keyN(i int) string { return fmt.Sprintf("ns/owner-%d", i) }

// countingSink counts Info calls per message without formatting anything,
// for tests that log 100,000 lines.
type countingSink struct {
	mu     sync.Mutex
	counts map[string]int
}

func (s *countingSink) Init(logr.RuntimeInfo)          {}
func (s *countingSink) Enabled(int) bool               { return true }
func (s *countingSink) Error(error, string, ...any)    {}
func (s *countingSink) WithValues(...any) logr.LogSink { return s }
func (s *countingSink) WithName(string) logr.LogSink   { return s }
func (s *countingSink) Info(_ int, msg string, _ ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.counts == nil {
		s.counts = make(map[string]int)
	}
	s.counts[msg]++
}

func (s *countingSink) count(substr string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for msg, c := range s.counts {
		if strings.Contains(msg, substr) {
			n += c
		}
	}
	return n
}
