package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/e2e/kubetest"
	"github.com/ctrlkit/ctrlkit/podset"
)

// The identity the example controller ships with: deploy/rbac-*.yaml bind
// their roles to this service account, and the leader-election Role covers
// this Lease.
const (
	controllerNamespace      = "ctrlkit-system"
	controllerServiceAccount = "ctrlkit-replicaset-controller"
	controllerLease          = "ctrlkit-replicaset-controller"
)

// rbacManifests are the example's shipped RBAC files, applied from the files
// themselves so that the scenarios test what an operator installs: the
// service account and its Lease, and the cluster-wide roles of both kinds,
// since the scenarios run the controller of each as that account.
var rbacManifests = []string{
	filepath.Join("..", "..", "examples", "replicaset", "deploy", "rbac-base.yaml"),
	filepath.Join("..", "..", "examples", "replicaset", "deploy", "rbac-replicaset.yaml"),
	filepath.Join("..", "..", "examples", "replicaset", "deploy", "rbac-replicationcontroller.yaml"),
}

// newFaultScenario gives a fault scenario its own control plane, because the
// faults (a restart, a compaction) would disturb other tests. It authorizes
// with RBAC and OwnerReferencesPermissionEnforcement, has the shipped RBAC
// manifest applied, and runs the controller as that manifest's service
// account. Watches read etcd directly (--watch-cache=false), so a watch
// resumed after a restart picks up exactly where it stopped, and one resumed
// from a compacted revision always gets "too old resource version".
func newFaultScenario(t *testing.T, timeout time.Duration, opts ...scenarioOption) *scenario {
	t.Helper()
	e := kubetest.StartT(t, kubetest.WithRBAC(), kubetest.WithAPIServerFlags("--watch-cache=false"))
	t.Logf("fault control plane started in %s", e.StartDuration.Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, manifest := range rbacManifests {
		_, err := e.ApplyManifestFile(ctx, manifest)
		require.NoError(t, err, "apply %s", manifest)
	}
	opts = append([]scenarioOption{onOwnEnv(e), asServiceAccount(controllerNamespace, controllerServiceAccount)}, opts...)
	return newScenario(t, timeout, opts...)
}

// requireRSStatus checks the status of a converged ReplicaSet of unready pods.
func requireRSStatus(t *testing.T, rs *appsv1.ReplicaSet, replicas int32) {
	t.Helper()
	assert.Equal(t, rs.Generation, rs.Status.ObservedGeneration, "observedGeneration")
	assert.Equal(t, replicas, rs.Status.Replicas, "status.replicas")
	assert.Equal(t, replicas, rs.Status.FullyLabeledReplicas, "status.fullyLabeledReplicas")
	assert.Zero(t, rs.Status.ReadyReplicas, "status.readyReplicas")
	assert.Zero(t, rs.Status.AvailableReplicas, "status.availableReplicas")
	assert.Nil(t, condition(rs.Status.Conditions, appsv1.ReplicaSetReplicaFailure), "no ReplicaFailure left")
}

// Fault 1: kube-apiserver is stopped in the middle of a 0 → 1000 scale-up,
// stays down for longer than the read-your-writes guard's TTL, and is
// started again (same etcd). The controller, left to itself, reconnects,
// resumes writing within a minute of the apiserver answering again,
// finishes the scale-up at exactly 1000 pods and writes a correct status.
//
// The guard's TTL is shortened to 20 s so that an outage longer than it
// stays short. During the outage every sync fails against a server that
// cannot be reached, and the owner is held by the guard for writes its
// informers have not seen; neither may leave it waiting long after the
// server is back.
//
// Documented exception to the over-creation invariant: a create in flight
// when the apiserver goes away gets no response, so the controller cannot
// know whether it landed. Each such call may leave one pod more than desired
// until the controller sees it and deletes the surplus; the allowance is the
// number of those calls, measured.
func TestFaultAPIServerRestartMidScaleUp(t *testing.T) {
	const (
		guardTTL = 20 * time.Second
		outage   = guardTTL + 10*time.Second
		// resumeBound is how soon after the apiserver answers again the
		// controller must write again.
		resumeBound = time.Minute
	)
	s := newFaultScenario(t, 15*time.Minute)
	labels := map[string]string{"app": "restart"}
	s.createRS("web", 0, labels)
	rec := s.recordPods("app=restart")
	s.runController(kindReplicaSet, podset.WithReadYourWritesTTL(guardTTL))
	s.waitRS("web", time.Minute, "the empty ReplicaSet to be observed", func(rs *appsv1.ReplicaSet) bool { return rs.Status.Replicas == 0 })

	start := time.Now()
	s.scaleRS("web", 1000)
	s.eventually(3*time.Minute, "the scale-up to pass 200 pods", func() (bool, string) {
		h := rec.snapshot()
		return h.Created >= 200, fmt.Sprintf("%d created", h.Created)
	})
	atRestart := rec.snapshot().Created
	stopped := time.Now()
	// Until /readyz passes, the starting apiserver refuses requests its
	// authorizer cannot judge yet; the controller just retries those.
	s.audit.excuse()
	require.NoError(t, s.env.StopAPIServer())
	time.Sleep(outage - time.Since(stopped))
	require.NoError(t, s.env.StartAPIServer(s.ctx))
	up := time.Now()
	s.audit.endExcuse()
	t.Logf("apiserver stopped after %d of 1000 pods; down for %s (guard TTL %s)", atRestart, up.Sub(stopped).Round(time.Millisecond), guardTTL)
	require.Less(t, atRestart, 1000, "the restart must happen mid scale-up")

	var resumed time.Duration
	s.eventually(resumeBound, "the controller to write again after the apiserver is back", func() (bool, string) {
		at, ok := s.creates.firstWriteAfter(up)
		resumed = at.Sub(up)
		return ok, "no successful write yet"
	})
	t.Logf("first successful write %s after the apiserver answered again", resumed.Round(time.Millisecond))

	rs := s.waitRS("web", 10*time.Minute, "1000 replicas after the restart", func(rs *appsv1.ReplicaSet) bool {
		return rs.Status.Replicas == 1000 && rs.Status.FullyLabeledReplicas == 1000
	})
	t.Logf("0 → 1000 across the outage in %s; %s after the apiserver was back", time.Since(start).Round(time.Millisecond), time.Since(up).Round(time.Millisecond))
	unknown := int(s.creates.unknown.Load())
	s.overCreation.allow("web", unknown, "creates in flight while the apiserver was down got no response")
	h := s.settle(rec, 3*time.Second)
	requireRSStatus(t, rs, 1000)
	assert.Len(t, ownedBy(activePods(s.listPods("app=restart")), rs.UID), 1000, "pods at the end")
	assert.Equal(t, 1000, h.Created-h.Deleted, "created minus deleted")
	assert.LessOrEqual(t, h.Deleted, unknown, "only surplus from unanswered creates is deleted")
	t.Logf("%d create calls, %d without an answer, %d pods created, %d deleted, excess peak %d, %d requests refused while the apiserver started",
		s.creates.calls.Load(), unknown, h.Created, h.Deleted, s.overCreation.peakExcess("ReplicaSet/web"), s.audit.excusedCount())
}

// watchGate holds the controller's watch requests while closed, and cuts the
// watches that are open when it closes. It also records the resourceVersion
// every held watch resumed from, and counts list requests, which show a
// reflector relisting.
type watchGate struct {
	mu      sync.Mutex
	open    chan struct{} // closed while the gate is open
	bodies  map[*trackedBody]struct{}
	held    atomic.Int64
	resumed []string // resourceVersions of watches that waited at the gate
	lists   map[string]int
}

func newWatchGate() *watchGate {
	g := &watchGate{open: make(chan struct{}), bodies: map[*trackedBody]struct{}{}, lists: map[string]int{}}
	close(g.open)
	return g
}

func (g *watchGate) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet {
			return rt.RoundTrip(req)
		}
		q := req.URL.Query()
		resource := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
		// A list, or a watch that starts with the current state (client-go's
		// streaming list), is the reflector relisting; it is counted when it
		// is sent, after the gate.
		relist := func() {
			if q.Get("watch") != "true" || q.Get("sendInitialEvents") == "true" {
				g.mu.Lock()
				g.lists[resource]++
				g.mu.Unlock()
			}
		}
		if q.Get("watch") != "true" {
			relist()
			return rt.RoundTrip(req)
		}
		g.mu.Lock()
		open := g.open
		g.mu.Unlock()
		select {
		case <-open:
		default:
			g.held.Add(1)
			select {
			case <-open:
			case <-req.Context().Done():
				g.held.Add(-1)
				return nil, req.Context().Err()
			}
			g.held.Add(-1)
			g.mu.Lock()
			g.resumed = append(g.resumed, resource+"@"+q.Get("resourceVersion"))
			g.mu.Unlock()
		}
		relist()
		resp, err := rt.RoundTrip(req)
		if err != nil {
			return resp, err
		}
		b := &trackedBody{ReadCloser: resp.Body, gate: g}
		g.mu.Lock()
		g.bodies[b] = struct{}{}
		g.mu.Unlock()
		resp.Body = b
		return resp, nil
	})
}

// closeAndCut closes the gate and ends every open watch.
func (g *watchGate) closeAndCut() {
	g.mu.Lock()
	g.open = make(chan struct{})
	bodies := make([]*trackedBody, 0, len(g.bodies))
	for b := range g.bodies {
		bodies = append(bodies, b)
	}
	g.mu.Unlock()
	for _, b := range bodies {
		_ = b.Close()
	}
}

// release opens the gate and returns the list counts at that moment.
func (g *watchGate) release() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.open)
	counts := map[string]int{}
	for k, v := range g.lists {
		counts[k] = v
	}
	return counts
}

func (g *watchGate) listCounts() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	counts := map[string]int{}
	for k, v := range g.lists {
		counts[k] = v
	}
	return counts
}

type trackedBody struct {
	io.ReadCloser
	gate *watchGate
	once sync.Once
}

func (b *trackedBody) Close() error {
	b.once.Do(func() {
		b.gate.mu.Lock()
		delete(b.gate.bodies, b)
		b.gate.mu.Unlock()
	})
	return b.ReadCloser.Close()
}

// Fault 2: the controller's watches are cut and held back while the
// ReplicaSets change, etcd is compacted past the revision they would resume
// from, and the watches are let through. The revision they stopped at no
// longer exists, so the reflectors must relist: client-go 1.36 (streaming
// lists on by default) resumes with a watch that first sends the current
// state (sendInitialEvents, not older than the last revision seen), and an
// older client gets "too old resource version" and lists. No owner is left
// stale: the scale-up and the scale-down made just before the relist are
// acted on, and a pod deleted meanwhile is replaced.
func TestFaultWatchExpiryRelist(t *testing.T) {
	gate := newWatchGate()
	s := newFaultScenario(t, 10*time.Minute, wrapController(gate.wrap))
	up, down, hurt := map[string]string{"app": "up"}, map[string]string{"app": "down"}, map[string]string{"app": "hurt"}
	s.createRS("up", 10, up)
	s.createRS("down", 10, down)
	s.createRS("hurt", 5, hurt)
	s.runController(kindReplicaSet)
	for name, n := range map[string]int32{"up": 10, "down": 10, "hurt": 5} {
		s.waitRS(name, 2*time.Minute, fmt.Sprintf("%s at %d replicas", name, n), func(rs *appsv1.ReplicaSet) bool { return rs.Status.Replicas == n })
	}

	gate.closeAndCut()
	s.eventually(30*time.Second, "the controller's watches to wait at the gate", func() (bool, string) {
		return gate.held.Load() >= 2, fmt.Sprintf("%d held", gate.held.Load())
	})
	s.scaleRS("up", 20)
	s.scaleRS("down", 4)
	victim := activePods(s.listPods("app=hurt"))[0].Name
	require.NoError(t, s.client.CoreV1().Pods(s.ns).Delete(s.ctx, victim, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}))
	compacted, err := s.env.CompactEtcd(s.ctx)
	require.NoError(t, err)
	before := gate.release()
	start := time.Now()

	for name, n := range map[string]int32{"up": 20, "down": 4, "hurt": 5} {
		// "hurt" kept its spec and status, so its status alone cannot show
		// that the deleted pod was replaced: wait for the pods themselves.
		var rs *appsv1.ReplicaSet
		s.eventually(2*time.Minute, fmt.Sprintf("%s at %d pods and replicas after the relist", name, n), func() (bool, string) {
			var err error
			rs, err = s.client.AppsV1().ReplicaSets(s.ns).Get(s.ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			pods := len(ownedBy(activePods(s.listPods("app="+name)), rs.UID))
			return pods == int(n) && rs.Status.Replicas == n && rs.Status.ObservedGeneration >= rs.Generation,
				fmt.Sprintf("%d pods, status %+v", pods, rs.Status)
		})
		requireRSStatus(t, rs, n)
	}
	t.Logf("converged %s after the watches were let through", time.Since(start).Round(time.Millisecond))

	gate.mu.Lock()
	resumed := append([]string(nil), gate.resumed...)
	gate.mu.Unlock()
	require.NotEmpty(t, resumed)
	for _, r := range resumed {
		from := r[strings.Index(r, "@")+1:]
		if from == "" || from == "0" {
			continue // a fresh streaming list, not a resumed watch
		}
		rv, err := strconv.ParseInt(from, 10, 64)
		require.NoError(t, err, "watch %s", r)
		// A watch from N reads from N+1; etcd keeps the compaction revision.
		assert.Less(t, rv+1, compacted, "watch %s resumed from a compacted revision, so it had to fail with 410", r)
	}
	after := gate.listCounts()
	for _, resource := range []string{"pods", "replicasets"} {
		assert.Greater(t, after[resource], before[resource], "the %s reflector relisted", resource)
	}
	t.Logf("watches resumed from %v, etcd compacted at %d; lists before %v, after %v", resumed, compacted, before, after)
}

// createTimeouts lets the first limit creates of resource (pods when
// empty) that match every-th call reach the apiserver and succeed, then
// answers the controller with the 504 Timeout the apiserver sends when a
// request outlives its deadline. Injection stops for good at the limit or
// when stop is called, whichever comes first; stoppedAt says when.
type createTimeouts struct {
	resource     string
	every, limit int64
	calls        atomic.Int64
	injected     atomic.Int64

	mu      sync.Mutex
	stopped time.Time
}

// stop ends the injection, if it has not ended yet, and returns when it did.
func (c *createTimeouts) stop() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped.IsZero() {
		c.stopped = time.Now()
	}
	return c.stopped
}

// stoppedAt returns when the injection stopped, and whether it has.
func (c *createTimeouts) stoppedAt() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopped, !c.stopped.IsZero()
}

// inject reports whether this stored create is answered with a 504. The
// decision and the limit are taken under the lock, so no 504 goes out after
// stoppedAt.
func (c *createTimeouts) inject() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stopped.IsZero() || c.injected.Load() >= c.limit {
		return false
	}
	if c.injected.Add(1) == c.limit {
		c.stopped = time.Now()
	}
	return true
}

func (c *createTimeouts) wrap(rt http.RoundTripper) http.RoundTripper {
	resource := c.resource
	if resource == "" {
		resource = "pods"
	}
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/"+resource) {
			return rt.RoundTrip(req)
		}
		n := c.calls.Add(1)
		resp, err := rt.RoundTrip(req)
		if err != nil || resp.StatusCode != http.StatusCreated || n%c.every != 0 || !c.inject() {
			return resp, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		status := metav1.Status{
			TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status:   metav1.StatusFailure,
			Message:  "Timeout: request did not complete within the allotted timeout",
			Reason:   metav1.StatusReasonTimeout,
			Code:     http.StatusGatewayTimeout,
		}
		body, _ := json.Marshal(status)
		return &http.Response{
			StatusCode: http.StatusGatewayTimeout,
			Status:     "504 Gateway Timeout",
			Header:     http.Header{"Content-Type": []string{"application/json"}},
			Body:       io.NopCloser(strings.NewReader(string(body))),
			Request:    req,
			Proto:      resp.Proto, ProtoMajor: resp.ProtoMajor, ProtoMinor: resp.ProtoMinor,
		}, nil
	})
}

// Fault 3: some pod creates succeed on the apiserver but the controller is
// told they timed out. It converges to exactly spec.replicas, deleting the
// surplus those pods make once it sees them.
//
// Documented exception to the over-creation invariant: each timed-out create
// is a pod the controller does not count on, so the owner may exceed its
// replicas by at most the number of timed-out calls, and the test shows that
// bound holds.
func TestFaultCreateSucceededButTimedOut(t *testing.T) {
	const replicas, timeouts = 200, 5
	fault := &createTimeouts{every: 7, limit: timeouts}
	s := newFaultScenario(t, 10*time.Minute, wrapController(fault.wrap))
	s.overCreation.allow("web", timeouts, "creates that succeeded but timed out make pods the controller did not count on")
	labels := map[string]string{"app": "timeouts"}
	s.createRS("web", 0, labels)
	rec := s.recordPods("app=timeouts")
	s.runController(kindReplicaSet)
	s.waitRS("web", time.Minute, "the empty ReplicaSet to be observed", func(rs *appsv1.ReplicaSet) bool { return rs.Status.Replicas == 0 })

	start := time.Now()
	s.scaleRS("web", replicas)
	s.waitRS("web", 5*time.Minute, "200 replicas", func(rs *appsv1.ReplicaSet) bool { return rs.Status.Replicas == replicas })
	h := s.settle(rec, 3*time.Second)
	rs := s.waitRS("web", time.Minute, "200 replicas after settling", func(rs *appsv1.ReplicaSet) bool { return rs.Status.Replicas == replicas })
	t.Logf("converged in %s", time.Since(start).Round(time.Millisecond))

	injected := int(fault.injected.Load())
	require.Equal(t, timeouts, injected, "timeouts injected")
	requireRSStatus(t, rs, replicas)
	assert.Len(t, ownedBy(activePods(s.listPods("app=timeouts")), rs.UID), replicas, "pods at the end")
	assert.Equal(t, replicas, h.Created-h.Deleted, "created minus deleted")
	assert.LessOrEqual(t, h.Deleted, injected, "only the surplus is deleted")
	peak := s.overCreation.peakExcess("ReplicaSet/web")
	assert.LessOrEqual(t, peak, injected, "transient overshoot bounded by the timed-out calls")
	t.Logf("%d timed-out creates: %d pods created, %d surplus deleted, peak overshoot %d", injected, h.Created, h.Deleted, peak)
}
