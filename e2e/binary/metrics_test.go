package binary

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The names the binary's /metrics must serve: client-go's workqueue family
// under the ReplicaSet controller's queue name, and upstream's scale-down
// histogram.
const (
	metricsQueueName = "replicaset"
	addsMetric       = "workqueue_adds_total"
	depthMetric      = "workqueue_depth"
	unfinishedMetric = "workqueue_unfinished_work_seconds"
	ageRatioMetric   = "replicaset_controller_sorting_deletion_age_ratio"
	// The binary's counters of the pods it wrote, labelled by --kind.
	podsCreatedMetric = "ctrlkit_controller_pods_created_total"
	podsDeletedMetric = "ctrlkit_controller_pods_deleted_total"
)

// TestMetricsScaleUpAndDown reads /metrics from the running binary on its
// --metrics-addr (never the health port, which probes and so anyone who
// reaches the pod can reach): a scale-up adds work to the "replicaset" queue and leaves it
// empty once settled, and a sorted scale-down of Ready pods records the
// deletion-age ratio, once per Ready pod deleted.
func TestMetricsScaleUpAndDown(t *testing.T) {
	s := newScenario(t, scenarioTimeout)
	pods := s.watchPods()
	p := startController(t, "controller", s.controllerArgs(shipped.kubeconfig)...)
	p.waitReady(s.ctx, t)
	client := &http.Client{Timeout: 2 * time.Second}
	code, err := getStatus(s.ctx, client, p.healthURL+"/metrics")
	require.NoError(t, err)
	require.Equal(t, http.StatusNotFound, code, "/metrics on the health port")
	scraper := &metricsScraper{url: p.metricsURL + "/metrics", client: client}

	before := scraper.scrape(s.ctx, t)
	require.Contains(t, before, depthMetric, "the queue's metrics are registered before any work")
	require.Zero(t, ageRatioCount(t, before), "no scale-down yet")

	const up, down = 20, 5
	pods.limit("web", up)
	s.createReplicaSet("web", 0)
	s.waitFor("an empty ReplicaSet", s.replicaSetSettled("web", 0, pods))
	s.scaleReplicaSet("web", up)
	s.waitFor(fmt.Sprintf("%d pods and their status", up), s.replicaSetSettled("web", up, pods))
	var settled map[string]*dto.MetricFamily
	s.waitFor("the queue to drain", scraper.idle(s.ctx, t, &settled))
	adds := queueValue(t, settled, addsMetric)
	require.Positive(t, adds, "%s{name=%q} after a scale-up", addsMetric, metricsQueueName)
	t.Logf("after the scale-up to %d: %s{name=%q}=%v, %s=0, %s=0", up, addsMetric, metricsQueueName, adds, depthMetric, unfinishedMetric)

	// Upstream samples the ratio only among Ready pods, and only when a
	// scale-down sorts (keeps some pods). Without a kubelet, the test makes
	// the pods Ready itself, long enough ago that none is just starting.
	s.markPodsReady("web", time.Now().Add(-time.Minute))
	s.waitFor(fmt.Sprintf("%d ready replicas", up), s.replicaSetReady("web", up, up, pods))
	s.scaleReplicaSet("web", down)
	s.waitFor(fmt.Sprintf("%d ready replicas", down), s.replicaSetReady("web", down, down, pods))
	var after map[string]*dto.MetricFamily
	s.waitFor("the queue to drain after the scale-down", scraper.idle(s.ctx, t, &after))
	// Every deleted pod was Ready, so each was sampled once.
	require.EqualValues(t, up-down, ageRatioCount(t, after), "%s samples after deleting %d Ready pods", ageRatioMetric, up-down)
	require.Greater(t, queueValue(t, after, addsMetric), adds, "the scale-down added work")
	// The binary's own pod-write counters agree with what the apiserver saw.
	require.Equal(t, float64(up), controllerValue(t, after, podsCreatedMetric), podsCreatedMetric)
	require.Equal(t, float64(up-down), controllerValue(t, after, podsDeletedMetric), podsDeletedMetric)

	t.Logf("trimmed /metrics after the scale-down to %d:\n%s", down, trimScrape(scraper.lastText))
	requireNoForbidden(t, p)
}

// markPodsReady sets every pod of owner to Running and Ready since since,
// through the status subresource, as a kubelet would.
func (s *scenario) markPodsReady(owner string, since time.Time) {
	s.t.Helper()
	list, err := s.client.CoreV1().Pods(s.ns).List(s.ctx, metav1.ListOptions{LabelSelector: "app=" + owner})
	require.NoError(s.t, err)
	require.NotEmpty(s.t, list.Items, "pods of %s", owner)
	for i := range list.Items {
		pod := &list.Items[i]
		pod.Status.Phase = corev1.PodRunning
		pod.Status.Conditions = []corev1.PodCondition{{
			Type:               corev1.PodReady,
			Status:             corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(since),
		}}
		_, err := s.client.CoreV1().Pods(s.ns).UpdateStatus(s.ctx, pod, metav1.UpdateOptions{})
		require.NoError(s.t, err, "mark %s ready", pod.Name)
	}
}

// metricsScraper reads the binary's /metrics and keeps the last text read.
type metricsScraper struct {
	url      string
	client   *http.Client
	lastText string
}

// scrape fetches and parses one exposition, failing the test on anything but
// a 200 in the text format.
func (m *metricsScraper) scrape(ctx context.Context, t testing.TB) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.url, nil)
	require.NoError(t, err)
	resp, err := m.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "GET %s", m.url)
	var body strings.Builder
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(io.TeeReader(resp.Body, &body))
	require.NoError(t, err, "parse %s", m.url)
	m.lastText = body.String()
	return families
}

// idle is a waitFor condition: the queue is empty and no worker is busy
// (client-go refreshes the unfinished-work gauge every half second). The last
// scrape is left in *last.
func (m *metricsScraper) idle(ctx context.Context, t testing.TB, last *map[string]*dto.MetricFamily) func() (bool, string) {
	return func() (bool, string) {
		*last = m.scrape(ctx, t)
		depth := queueValue(t, *last, depthMetric)
		unfinished := queueValue(t, *last, unfinishedMetric)
		return depth == 0 && unfinished == 0, fmt.Sprintf("%s=%v %s=%v", depthMetric, depth, unfinishedMetric, unfinished)
	}
}

// queueValue is the gauge or counter of family for the controller's queue;
// the family must hold exactly one series with that name label.
func queueValue(t testing.TB, families map[string]*dto.MetricFamily, family string) float64 {
	t.Helper()
	return labelledValue(t, families, family, "name", metricsQueueName)
}

// controllerValue is the counter of family for the ReplicaSet controller.
func controllerValue(t testing.TB, families map[string]*dto.MetricFamily, family string) float64 {
	t.Helper()
	return labelledValue(t, families, family, "controller", "replicaset")
}

// labelledValue is the one gauge or counter of family whose label is value.
func labelledValue(t testing.TB, families map[string]*dto.MetricFamily, family, label, value string) float64 {
	t.Helper()
	f := families[family]
	require.NotNil(t, f, "%s is not served", family)
	var values []float64
	for _, m := range f.GetMetric() {
		if !hasLabel(m, label, value) {
			continue
		}
		switch {
		case m.GetGauge() != nil:
			values = append(values, m.GetGauge().GetValue())
		case m.GetCounter() != nil:
			values = append(values, m.GetCounter().GetValue())
		}
	}
	require.Len(t, values, 1, "%s{%s=%q} series", family, label, value)
	return values[0]
}

func hasLabel(m *dto.Metric, name, value string) bool {
	return slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool {
		return l.GetName() == name && l.GetValue() == value
	})
}

// ageRatioCount is the deletion-age histogram's sample count.
func ageRatioCount(t testing.TB, families map[string]*dto.MetricFamily) uint64 {
	t.Helper()
	f := families[ageRatioMetric]
	require.NotNil(t, f, "%s is not served", ageRatioMetric)
	require.Len(t, f.GetMetric(), 1, "%s series", ageRatioMetric)
	h := f.GetMetric()[0].GetHistogram()
	require.NotNil(t, h, "%s is a histogram", ageRatioMetric)
	return h.GetSampleCount()
}

// trimScrape keeps the exposition lines an operator would look at for this
// controller: its queue's samples (without the duration buckets), the
// deletion-age histogram, and the sync and pod-write counters.
func trimScrape(text string) string {
	var keep []string
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "#"),
			strings.HasPrefix(line, "workqueue_") && strings.Contains(line, "_bucket{"):
		case strings.HasPrefix(line, "workqueue_") && strings.Contains(line, `name="`+metricsQueueName+`"`),
			strings.HasPrefix(line, ageRatioMetric),
			strings.HasPrefix(line, "ctrlkit_"),
			strings.HasPrefix(line, "controller_runtime_reconcile_total"),
			strings.HasPrefix(line, "controller_runtime_reconcile_errors_total"):
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}
