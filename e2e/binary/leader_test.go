package binary

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// acquiredLog is what client-go's leader election logs on winning the lease
// (capitalised from v0.36 on, so matched without the first word).
const acquiredLog = "acquired lease"

// pair is a leader and a standby, each behind its own recording proxy.
type pair struct {
	leader, standby           *controllerProcess
	leaderProxy, standbyProxy *apiProxy
	leaderIdentity            string
}

// startPair starts the leader, waits until it holds the Lease, then starts
// the standby and waits until it is up (a standby reports ready).
func (s *scenario) startPair(timing leaseTiming, extra ...string) *pair {
	s.t.Helper()
	p := &pair{leaderProxy: startProxy(s.t, "leader-proxy"), standbyProxy: startProxy(s.t, "standby-proxy")}
	args := append(leaderArgs(timing), extra...)
	p.leader = startController(s.t, "leader", s.controllerArgs(p.leaderProxy.kubeconfig(s.t, shipped), args...)...)
	p.leader.waitOutput(s.ctx, s.t, acquiredLog)
	p.leader.waitReady(s.ctx, s.t)
	p.leaderIdentity = s.holder()
	require.NotEmpty(s.t, p.leaderIdentity)
	p.standby = startController(s.t, "standby", s.controllerArgs(p.standbyProxy.kubeconfig(s.t, shipped), args...)...)
	p.standby.waitReady(s.ctx, s.t)
	require.Equal(s.t, p.leaderIdentity, s.holder(), "the standby took the lease from a live leader")
	return p
}

// scaleUpHalfway creates a ReplicaSet of 0, scales it to want and returns
// once the leader has created at least atLeast pods.
func (s *scenario) scaleUpHalfway(pods *podWatch, name string, want int32, atLeast int) {
	s.t.Helper()
	pods.limit(name, int(want))
	s.createReplicaSet(name, 0)
	s.waitFor("the empty ReplicaSet observed", s.replicaSetSettled(name, 0, pods))
	s.scaleReplicaSet(name, want)
	s.waitFor("the scale-up under way", func() (bool, string) {
		n := pods.active(name)
		return n >= atLeast, fmt.Sprintf("pods: %d", n)
	})
}

// onlyLeaderWrote fails if the standby changed pods or status before it
// held the lease.
func onlyLeaderWrote(t testing.TB, p *pair, acquired time.Time) {
	t.Helper()
	leaderWrites := len(p.leaderProxy.writesOf(controllerWrite))
	early := 0
	for _, w := range p.standbyProxy.writesOf(controllerWrite) {
		if w.at.Before(acquired) {
			early++
		}
	}
	t.Logf("controller writes: leader %d, standby before acquiring %d", leaderWrites, early)
	require.Positive(t, leaderWrites, "the leader made no writes")
	require.Zero(t, early, "the standby wrote while the other process led")
}

// TestLeaderKilled kills -9 the leader in the middle of a 0 -> 500 scale-up:
// the standby takes over once the lease expires and finishes at exactly 500.
func TestLeaderKilled(t *testing.T) {
	s := newScenario(t, scenarioTimeout)
	timing := leaseTiming{lease: 12 * time.Second, renew: 8 * time.Second, retry: time.Second}
	pods := s.watchPods()
	p := s.startPair(timing)

	s.scaleUpHalfway(pods, "scale", 500, 100)
	killedAt := p.leader.kill9(t)
	createdByLeader := pods.active("scale")
	_, acquired := s.waitNewHolder(p.leaderIdentity)
	takeover := acquired.Sub(killedAt)
	t.Logf("kill -9 at %d pods; takeover %s after the kill (lease duration %s)", createdByLeader, takeover.Round(time.Millisecond), timing.lease)
	// The standby may take over only once the lease has expired, and must
	// by then: it polls every retry period (with jitter), and noticed the
	// leader's last renewal up to one period late.
	require.Less(t, takeover, timing.lease+3*timing.retry+4*time.Second, "takeover took longer than the lease allows")
	// The leader renewed at most a retry period or so before the kill; half
	// the lease duration leaves room for a late renewal on a loaded machine.
	require.Greater(t, takeover, timing.lease/2, "takeover before the killed leader's lease could expire")
	p.standby.waitOutput(s.ctx, t, acquiredLog)

	s.waitFor("500 pods and their status", s.replicaSetSettled("scale", 500, pods))
	onlyLeaderWrote(t, p, acquired)
	require.Equal(t, 500, pods.maxSeen("scale"))

	p.standby.signal(t, syscall.SIGTERM)
	require.Equal(t, 0, p.standby.wait(t, 40*time.Second), "standby's exit code after SIGTERM")
	requireNoForbidden(t, p.standby)
}

// TestLeaderSIGTERM stops the leader with SIGTERM: it drains, releases the
// Lease and exits 0, and the standby takes over at once rather than after
// the lease duration.
func TestLeaderSIGTERM(t *testing.T) {
	s := newScenario(t, scenarioTimeout)
	// A long lease, so that a takeover by expiry cannot pass for a release.
	timing := leaseTiming{lease: 30 * time.Second, renew: 20 * time.Second, retry: time.Second}
	pods := s.watchPods()
	p := s.startPair(timing)

	pods.limit("web", 20)
	s.createReplicaSet("web", 20)
	s.waitFor("20 pods and their status", s.replicaSetSettled("web", 20, pods))

	sentAt := p.leader.signal(t, syscall.SIGTERM)
	require.Equal(t, 0, p.leader.wait(t, 40*time.Second), "leader's exit code after SIGTERM")
	_, acquired := s.waitNewHolder(p.leaderIdentity)
	takeover := acquired.Sub(sentAt)
	t.Logf("SIGTERM to exit %s; takeover %s after SIGTERM, %s after exit (lease duration %s)",
		p.leader.exitedAt.Sub(sentAt).Round(time.Millisecond), takeover.Round(time.Millisecond),
		acquired.Sub(p.leader.exitedAt).Round(time.Millisecond), timing.lease)
	require.Less(t, takeover, timing.lease/3, "the standby waited for the lease to expire: the leader did not release it")
	p.standby.waitOutput(s.ctx, t, acquiredLog)

	// The new leader works.
	pods.limit("web", 30)
	s.scaleReplicaSet("web", 30)
	s.waitFor("30 pods and their status", s.replicaSetSettled("web", 30, pods))
	onlyLeaderWrote(t, p, acquired)

	p.standby.signal(t, syscall.SIGTERM)
	require.Equal(t, 0, p.standby.wait(t, 40*time.Second), "new leader's exit code after SIGTERM")
	requireNoForbidden(t, p.leader)
	requireNoForbidden(t, p.standby)
}

// TestSecondSIGTERM sends SIGTERM during a long drain (a slow client and a
// long --drain-timeout), then a second one: the process exits at once.
func TestSecondSIGTERM(t *testing.T) {
	s := newScenario(t, scenarioTimeout)
	pods := s.watchPods()
	p := startController(t, "controller", s.controllerArgs(shipped.kubeconfig,
		"--kube-api-qps=2", "--kube-api-burst=1", "--drain-timeout=3m")...)
	p.waitReady(s.ctx, t)
	pods.limit("slow", 500)
	s.createReplicaSet("slow", 500)
	s.waitFor("the slow scale-up under way", func() (bool, string) {
		n := pods.active("slow")
		return n >= 3, fmt.Sprintf("pods: %d", n)
	})

	p.signal(t, syscall.SIGTERM)
	// Still draining: hundreds of creates at 2 per second are left.
	time.Sleep(3 * time.Second)
	require.False(t, p.exited(), "exited (code %d) before a second signal: no long drain to interrupt", p.exitCode)
	second := p.signal(t, syscall.SIGTERM)
	code := p.wait(t, 5*time.Second)
	t.Logf("second SIGTERM to exit: %s, exit code %d", p.exitedAt.Sub(second).Round(time.Millisecond), code)
	require.NotZero(t, code, "queued work was dropped: the exit must not report success")
	requireNoForbidden(t, p)
}

// TestLeaseLost makes the leader's Lease renewals fail in the middle of a
// 0 -> 500 scale-up. It must stop writing before the lease could pass to the
// standby, and exit non-zero; the standby takes over and finishes at 500.
func TestLeaseLost(t *testing.T) {
	s := newScenario(t, scenarioTimeout)
	timing := leaseTiming{lease: 12 * time.Second, renew: 8 * time.Second, retry: time.Second}
	pods := s.watchPods()
	p := s.startPair(timing)

	s.scaleUpHalfway(pods, "scale", 500, 60)
	blockedAt := p.leaderProxy.blockLeaseUpdates()
	_, acquired := s.waitNewHolder(p.leaderIdentity)
	t.Logf("lease updates blocked at %d pods; standby acquired %s later (lease duration %s)",
		pods.active("scale"), acquired.Sub(blockedAt).Round(time.Millisecond), timing.lease)

	code := p.leader.wait(t, 60*time.Second)
	n, last := p.leaderProxy.countSince(controllerWrite, acquired)
	afterBlock, _ := p.leaderProxy.countSince(controllerWrite, blockedAt)
	t.Logf("deposed leader: exit code %d, %s after blocking; %d writes after blocking, last %s after blocking; %d writes after the standby acquired",
		code, p.leader.exitedAt.Sub(blockedAt).Round(time.Millisecond), afterBlock, last.Sub(blockedAt).Round(time.Millisecond), n)
	require.Zero(t, n, "the deposed leader wrote after the standby acquired the lease (last write %s)", last.Format(time.RFC3339Nano))
	require.Less(t, last.Sub(blockedAt), timing.lease, "the deposed leader wrote later than a lease duration after its renewals began to fail")
	require.NotZero(t, code, "a process that lost its lease must exit non-zero")
	require.Less(t, p.leader.exitedAt.Sub(blockedAt), timing.lease+5*time.Second, "the deposed leader took too long to exit")

	p.standby.waitOutput(s.ctx, t, acquiredLog)
	s.waitFor("500 pods and their status", s.replicaSetSettled("scale", 500, pods))
	onlyLeaderWrote(t, p, acquired)
	require.Equal(t, 500, pods.maxSeen("scale"))
	p.standby.signal(t, syscall.SIGTERM)
	require.Equal(t, 0, p.standby.wait(t, 40*time.Second), "new leader's exit code after SIGTERM")
	requireNoForbidden(t, p.standby)
}
