package prommetrics

import (
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/ctrlkit/ctrlkit/workqueue"
)

// Before v0.36, client-go's queue stops its metrics goroutine up to half a
// second after ShutDown, on its own ticker; TestClientGoQueue's queue is shut
// down, so that goroutine is client-go's lag, not a leak.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("k8s.io/client-go/util/workqueue.(*Typed[...]).updateUnfinishedWorkLoop"))
}

// scrape serves reg over HTTP and parses the text exposition, as Prometheus
// would.
func scrape(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	families := decodeFamilies(t, resp)
	return families
}

// sample returns the metric of family with label name=queue.
func sample(t *testing.T, families map[string]*dto.MetricFamily, family, queue string) *dto.Metric {
	t.Helper()
	f, ok := families[family]
	require.True(t, ok, "family %s missing", family)
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == NameLabel && l.GetValue() == queue {
				return m
			}
		}
	}
	t.Fatalf("no %s sample for queue %q", family, queue)
	return nil
}

func TestTwoQueuesOneRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	// Two providers on one registry, as two components would build them.
	pa, err := NewProvider(reg)
	require.NoError(t, err)
	pb, err := NewProvider(reg)
	require.NoError(t, err)

	c := testingclock.NewFakeClock(time.Unix(1_000_000, 0))
	a := workqueue.NewRateLimiting(workqueue.NewItemExponentialFailureRateLimiter[string](time.Second, time.Minute),
		workqueue.WithName("alpha"), workqueue.WithMetricsProvider(pa), workqueue.WithClock(c))
	b := workqueue.New[string](workqueue.WithName("beta"), workqueue.WithMetricsProvider(pb), workqueue.WithClock(c))

	a.Add("x")
	a.Add("y")
	a.Add("x") // deduplicated: not an add
	b.Add("z")
	c.Step(2 * time.Second)
	item, _ := a.Get()
	c.Step(3 * time.Second)
	a.Done(item)
	a.AddRateLimited(item)

	fams := scrape(t, reg)
	assert.Equal(t, 1.0, sample(t, fams, DepthName, "alpha").GetGauge().GetValue(), "y is still queued")
	assert.Equal(t, 1.0, sample(t, fams, DepthName, "beta").GetGauge().GetValue())
	assert.Equal(t, 2.0, sample(t, fams, AddsName, "alpha").GetCounter().GetValue())
	assert.Equal(t, 1.0, sample(t, fams, AddsName, "beta").GetCounter().GetValue())
	assert.Equal(t, 1.0, sample(t, fams, RetriesName, "alpha").GetCounter().GetValue())
	assert.Equal(t, 0.0, sample(t, fams, RetriesName, "beta").GetCounter().GetValue())

	qd := sample(t, fams, QueueDurationName, "alpha").GetHistogram()
	assert.Equal(t, uint64(1), qd.GetSampleCount())
	assert.InDelta(t, 2.0, qd.GetSampleSum(), 1e-9)
	wd := sample(t, fams, WorkDurationName, "alpha").GetHistogram()
	assert.Equal(t, uint64(1), wd.GetSampleCount())
	assert.InDelta(t, 3.0, wd.GetSampleSum(), 1e-9)

	// component-base's buckets: 10 ns to 10 s by powers of ten.
	var bounds []float64
	for _, bk := range qd.GetBucket() {
		bounds = append(bounds, bk.GetUpperBound())
	}
	require.Len(t, bounds, 11, "ten buckets and +Inf")
	assert.InDelta(t, 1e-8, bounds[0], 1e-20)
	assert.InDelta(t, 10.0, bounds[9], 1e-9)
	assert.True(t, math.IsInf(bounds[10], 1))

	for _, name := range []string{UnfinishedWorkName, LongestRunningName} {
		sample(t, fams, name, "alpha")
		sample(t, fams, name, "beta")
	}
	a.ShutDown()
	b.ShutDown()
}

// The in-flight gauges are refreshed by the queue's own loop.
func TestUnfinishedWork(t *testing.T) {
	reg := prometheus.NewRegistry()
	p, err := NewProvider(reg)
	require.NoError(t, err)
	c := testingclock.NewFakeClock(time.Unix(1_000_000, 0))
	q := workqueue.New[string](workqueue.WithName("gamma"), workqueue.WithMetricsProvider(p), workqueue.WithClock(c))
	defer q.ShutDown()
	q.Add("a")
	q.Add("b")
	_, _ = q.Get()
	c.Step(4 * time.Second)
	_, _ = q.Get()
	c.Step(time.Second) // fires the 500 ms refresh ticker
	longest := p.longestRunning.WithLabelValues("gamma")
	require.Eventually(t, func() bool { return testutil.ToFloat64(longest) == 5 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, 6.0, testutil.ToFloat64(p.unfinishedWork.WithLabelValues("gamma")))
}

func TestConflictingMetricIsAnError(t *testing.T) {
	reg := prometheus.NewRegistry()
	// Same name, different labels: not ours, so it must not be reused.
	reg.MustRegister(prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: DepthName, Help: "other"}, []string{"queue"}))
	_, err := NewProvider(reg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "prommetrics:")
}

// client-go's own queue takes the provider as well.
func TestClientGoQueue(t *testing.T) {
	reg := prometheus.NewRegistry()
	p, err := NewProvider(reg)
	require.NoError(t, err)
	q := newClientGoQueue(p)
	q.Add("x")
	q.ShutDown()
	assert.Equal(t, 1.0, testutil.ToFloat64(p.adds.WithLabelValues("clientgo")))
}

// A nil registerer is a programmer error: it panics at the call with a
// message saying what to pass, not with a nil dereference inside Register.
func TestNewProviderNilRegistererPanics(t *testing.T) {
	assert.PanicsWithValue(t,
		"prommetrics: NewProvider: nil registerer; pass prometheus.DefaultRegisterer for the global registry",
		func() { _, _ = NewProvider(nil) })
}

// decodeFamilies reads an exposition in the format the response names. The
// decoder, unlike the text parser's constructors, has the same signature in
// every prometheus/common release the module's range of dependencies allows.
func decodeFamilies(t *testing.T, resp *http.Response) map[string]*dto.MetricFamily {
	t.Helper()
	dec := expfmt.NewDecoder(resp.Body, expfmt.ResponseFormat(resp.Header))
	families := map[string]*dto.MetricFamily{}
	for {
		f := &dto.MetricFamily{}
		err := dec.Decode(f)
		if errors.Is(err, io.EOF) {
			return families
		}
		require.NoError(t, err)
		families[f.GetName()] = f
	}
}
