package parity

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	appsv1defaults "k8s.io/kubernetes/pkg/apis/apps/v1"
	"k8s.io/kubernetes/pkg/controller/deployment"
	deploymentutil "k8s.io/kubernetes/pkg/controller/deployment/util"

	"github.com/ctrlkit/ctrlkit/status"

	// unsafe is required by go:linkname.
	_ "unsafe"
)

// The Deployment controller's Progressing condition is written by three of
// its unexported methods, in this order in a sync that rolls:
// checkPausedConditions, getNewReplicaSet (which records the new
// ReplicaSet) and syncRolloutStatus; a paused sync runs the first alone.
// requeueStuckDeployment says when to look at the deadline again. Each is
// called here as compiled upstream, bound by linkname (see linkname_test.go);
// so is the clock the deadline is judged by, pinned per case.

//go:linkname upstreamCheckPausedConditions k8s.io/kubernetes/pkg/controller/deployment.(*DeploymentController).checkPausedConditions
func upstreamCheckPausedConditions(dc *deployment.DeploymentController, ctx context.Context, d *appsv1.Deployment) error //nolint:revive // a method's receiver comes first

//go:linkname upstreamGetNewReplicaSet k8s.io/kubernetes/pkg/controller/deployment.(*DeploymentController).getNewReplicaSet
func upstreamGetNewReplicaSet(dc *deployment.DeploymentController, ctx context.Context, d *appsv1.Deployment, rsList, oldRSs []*appsv1.ReplicaSet, createIfNotExisted bool) (*appsv1.ReplicaSet, error) //nolint:revive // a method's receiver comes first

//go:linkname upstreamSyncRolloutStatus k8s.io/kubernetes/pkg/controller/deployment.(*DeploymentController).syncRolloutStatus
func upstreamSyncRolloutStatus(dc *deployment.DeploymentController, ctx context.Context, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) error //nolint:revive // a method's receiver comes first

//go:linkname upstreamRequeueStuckDeployment k8s.io/kubernetes/pkg/controller/deployment.(*DeploymentController).requeueStuckDeployment
func upstreamRequeueStuckDeployment(dc *deployment.DeploymentController, ctx context.Context, d *appsv1.Deployment, newStatus appsv1.DeploymentStatus) time.Duration //nolint:revive // a method's receiver comes first

//go:linkname upstreamDeploymentNow k8s.io/kubernetes/pkg/controller/deployment.nowFn
var upstreamDeploymentNow func() time.Time

//go:linkname upstreamUtilNow k8s.io/kubernetes/pkg/controller/deployment/util.nowFn
var upstreamUtilNow func() time.Time

// progressCases is the number of random cases of TestParityProgress.
const progressCases = 1500

// progressCase is one sync of a Deployment: its stored status and
// Progressing condition, its spec, and the counts of its ReplicaSets.
type progressCase struct {
	desired  int32
	paused   bool
	deadline *int32
	created  bool // the sync creates the new ReplicaSet, or finds it
	previous status.ProgressCounts
	// the new ReplicaSet's and the old one's replicas, ready and available
	newRS, oldRS [3]int32
	cond         *appsv1.DeploymentCondition // stored; its times relative to the case's now
}

var progressReasons = []string{
	status.ReasonNewRevisionCreated, status.ReasonFoundNewRevision, status.ReasonRevisionUpdated,
	status.ReasonNewRevisionAvailable, status.ReasonProgressDeadlineExceeded, status.ReasonPaused,
	status.ReasonResumed, "SomethingElse",
}

func randomCounts(r *rand.Rand, most int32) [3]int32 {
	replicas := r.Int32N(most + 1)
	ready := r.Int32N(replicas + 1)
	return [3]int32{replicas, ready, r.Int32N(ready + 1)}
}

func randomProgressCase(r *rand.Rand, now time.Time) progressCase {
	c := progressCase{desired: r.Int32N(6), paused: r.IntN(4) == 0, created: r.IntN(3) == 0,
		newRS: randomCounts(r, 6), oldRS: randomCounts(r, 3)}
	switch r.IntN(5) {
	case 0:
	case 1:
		c.deadline = new(int32(math.MaxInt32))
	default:
		c.deadline = new([]int32{1, 10, 600}[r.IntN(3)])
	}
	if r.IntN(3) == 0 {
		// The stored status is often the one this sync computes.
		c.previous = c.current()
	} else {
		prev := randomCounts(r, 8)
		c.previous = status.ProgressCounts{Replicas: prev[0] + r.Int32N(2), UpdatedReplicas: r.Int32N(prev[0] + 1), ReadyReplicas: prev[1], AvailableReplicas: prev[2]}
	}
	if r.IntN(5) > 0 {
		deadline := time.Duration(600) * time.Second
		if c.deadline != nil && *c.deadline != math.MaxInt32 {
			deadline = time.Duration(*c.deadline) * time.Second
		}
		// Never 0: a stored time equal to now would read as fresh.
		ago := max([]time.Duration{time.Millisecond, deadline - time.Second, deadline, deadline + time.Nanosecond, deadline + time.Second, time.Hour}[r.IntN(6)], time.Millisecond)
		c.cond = &appsv1.DeploymentCondition{
			Type:               appsv1.DeploymentProgressing,
			Status:             []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse, v1.ConditionUnknown}[r.IntN(3)],
			Reason:             progressReasons[r.IntN(len(progressReasons))],
			Message:            "stored",
			LastUpdateTime:     metav1.NewTime(now.Add(-ago)),
			LastTransitionTime: metav1.NewTime(now.Add(-2 * time.Hour)),
		}
	}
	return c
}

func (c progressCase) current() status.ProgressCounts {
	return status.ProgressCounts{
		Replicas: c.newRS[0] + c.oldRS[0], UpdatedReplicas: c.newRS[0],
		ReadyReplicas: c.newRS[1] + c.oldRS[1], AvailableReplicas: c.newRS[2] + c.oldRS[2],
	}
}

func (c progressCase) deployment(name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), Generation: 1},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(c.desired), Paused: c.paused, ProgressDeadlineSeconds: c.deadline,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "img:1"}}}},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType},
		},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: 1, Replicas: c.previous.Replicas, UpdatedReplicas: c.previous.UpdatedReplicas,
			ReadyReplicas: c.previous.ReadyReplicas, AvailableReplicas: c.previous.AvailableReplicas,
		},
	}
	appsv1defaults.SetDefaults_Deployment(d)
	if c.cond != nil {
		d.Status.Conditions = []appsv1.DeploymentCondition{*c.cond}
	}
	return d
}

// replicaSet is a ReplicaSet of d's template with counts (replicas, ready,
// available), its annotations as getNewReplicaSet leaves them, so that
// finding it writes nothing but d's status.
func replicaSet(ctx context.Context, d *appsv1.Deployment, name string, counts [3]int32) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: name, UID: types.UID("uid-rs-" + name),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
		Spec:   appsv1.ReplicaSetSpec{Replicas: new(counts[0]), Selector: d.Spec.Selector, Template: *d.Spec.Template.DeepCopy()},
		Status: appsv1.ReplicaSetStatus{Replicas: counts[0], ReadyReplicas: counts[1], AvailableReplicas: counts[2]},
	}
	deploymentutil.SetNewReplicaSetAnnotations(ctx, d, rs, "1", true, 2000)
	return rs
}

// upstreamProgress runs one sync's condition methods on d and returns its
// Progressing condition, the update revision's name, and the requeue of a
// sync that changed nothing (-1: none).
func upstreamProgress(ctx context.Context, dc *deployment.DeploymentController, c progressCase, d *appsv1.Deployment) (*appsv1.DeploymentCondition, string, time.Duration) {
	// Errors are the fake client's, after the status was set in memory.
	_ = upstreamCheckPausedConditions(dc, ctx, d)
	if c.paused {
		return deploymentutil.GetDeploymentCondition(d.Status, appsv1.DeploymentProgressing), "", -1
	}
	var rsList []*appsv1.ReplicaSet
	if !c.created {
		rsList = []*appsv1.ReplicaSet{replicaSet(ctx, d, d.Name+"-new", [3]int32{})}
	}
	newRS, err := upstreamGetNewReplicaSet(dc, ctx, d, rsList, nil, true)
	if err != nil || newRS == nil {
		panic(fmt.Sprintf("getNewReplicaSet: %v", err))
	}
	newRS.Status = appsv1.ReplicaSetStatus{Replicas: c.newRS[0], ReadyReplicas: c.newRS[1], AvailableReplicas: c.newRS[2]}
	old := replicaSet(ctx, d, d.Name+"-old", c.oldRS)
	old.Spec.Template.Spec.Containers[0].Image = "img:0"
	_ = upstreamSyncRolloutStatus(dc, ctx, []*appsv1.ReplicaSet{newRS, old}, newRS, d)
	return deploymentutil.GetDeploymentCondition(d.Status, appsv1.DeploymentProgressing), newRS.Name,
		upstreamRequeueStuckDeployment(dc, ctx, d, d.Status)
}

// TestParityProgress checks status.Progress against upstream's Deployment
// controller on random syncs: the Progressing condition (status, reason,
// message and both times) and when the deadline is looked at again.
// Upstream stamps new conditions with the wall clock, status.Progress with
// the now it is given: a time from after the case began is read as "now"
// on both sides. Upstream requeues at the deadline plus a second, or at
// once (rate limited) when less than a second is left; status.Progress
// says the deadline plus a second, at least one second.
func TestParityProgress(t *testing.T) {
	// Upstream logs every step at V(4) and below; a quiet logger keeps
	// the test's output to the differences.
	ctx := klog.NewContext(context.Background(), logr.Discard())
	client := fake.NewClientset()
	inf := informers.NewSharedInformerFactory(client, 0)
	dc, err := deployment.NewDeploymentController(ctx, inf.Apps().V1().Deployments(), inf.Apps().V1().ReplicaSets(), inf.Core().V1().Pods(), client)
	require.NoError(t, err)
	defer func() {
		stopped, cancel := context.WithCancel(ctx)
		cancel()
		dc.Run(stopped, 0) // shuts the queue and the event broadcaster down
	}()
	savedDeploymentNow, savedUtilNow := upstreamDeploymentNow, upstreamUtilNow
	defer func() { upstreamDeploymentNow, upstreamUtilNow = savedDeploymentNow, savedUtilNow }()

	r := rand.New(rand.NewPCG(7, 37))
	diffs := 0
	for i := range progressCases {
		now := time.Now()
		upstreamDeploymentNow = func() time.Time { return now }
		upstreamUtilNow = upstreamDeploymentNow
		c := randomProgressCase(r, now)
		d := c.deployment(fmt.Sprintf("d%05d", i))
		_, err := client.AppsV1().Deployments(d.Namespace).Create(ctx, d.DeepCopy(), metav1.CreateOptions{})
		require.NoError(t, err)
		began := time.Now()
		want, revision, requeue := upstreamProgress(ctx, dc, c, d)

		in := status.ProgressInput{
			Kind: "Deployment", Name: d.Name, RevisionKind: "ReplicaSet", Revision: revision,
			RevisionCreated: c.created && !c.paused, Desired: c.desired, Paused: c.paused,
			DeadlineSeconds: d.Spec.ProgressDeadlineSeconds, Previous: c.previous, Current: c.current(),
		}
		var stored []appsv1.DeploymentCondition
		if c.cond != nil {
			stored = []appsv1.DeploymentCondition{*c.cond}
		}
		conds, recheck := status.Progress(stored, in, now)
		got := deploymentutil.GetDeploymentCondition(appsv1.DeploymentStatus{Conditions: conds}, appsv1.DeploymentProgressing)

		stamp := func(cond *appsv1.DeploymentCondition, fresh func(time.Time) bool) *appsv1.DeploymentCondition {
			if cond == nil {
				return nil
			}
			out := cond.DeepCopy()
			for _, at := range []*metav1.Time{&out.LastUpdateTime, &out.LastTransitionTime} {
				if fresh(at.Time) {
					*at = metav1.Time{}
				}
			}
			return out
		}
		wantN := stamp(want, func(at time.Time) bool { return !at.Before(began) })
		gotN := stamp(got, func(at time.Time) bool { return at.Equal(now) })
		// Upstream's deadline counts from its own stamp, a little after
		// now: its requeue may be later by as much.
		late := time.Since(now)
		var recheckOK bool
		switch {
		case requeue < 0:
			recheckOK = recheck == 0
		case requeue == 0: // less than a second left
			recheckOK = recheck >= time.Second && recheck < 2*time.Second+late
		default:
			recheckOK = recheck <= requeue+time.Second && recheck >= requeue+time.Second-late
		}
		if !reflect.DeepEqual(wantN, gotN) || !recheckOK {
			diffs++
			if diffs <= 5 {
				t.Errorf("case %d %+v (stored %+v):\n upstream %+v requeue %v\n ctrlkit  %+v recheck %v", i, c, c.cond, want, requeue, got, recheck)
			}
		}
	}
	t.Logf("%d random syncs, %d differences", progressCases, diffs)
	require.Zero(t, diffs)
}
