package status_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ctrlkit/ctrlkit/status"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func readyPod(name string, labels map[string]string, since time.Time) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels},
		Status: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{
			{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(since)},
		}},
	}
}

// A sync loop computes the status from the pods it saw and writes it back;
// the second write in the steady state makes no API call.
func Example() {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	labels := map[string]string{"app": "web"}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Generation: 1},
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        ptr.To[int32](3),
			MinReadySeconds: 30,
			Template:        v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}},
		},
	}
	client := fake.NewClientset(rs)
	rsClient := client.AppsV1().ReplicaSets("default")

	pods := []*v1.Pod{
		readyPod("web-1", labels, now.Add(-time.Minute)),
		readyPod("web-2", labels, now.Add(-10*time.Second)),
	}
	// manageReplicas could not create the third pod.
	manageErr := errors.New("pods \"web-3\" is forbidden: exceeded quota")
	newStatus := status.CalculateReplicaSetStatus(rs, pods, nil, manageErr, now)
	updated, err := status.UpdateReplicaSetStatus(ctx, rsClient, rs, newStatus)
	if err != nil {
		panic(err)
	}
	st := updated.Status
	fmt.Printf("replicas=%d ready=%d available=%d observedGeneration=%d\n",
		st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.ObservedGeneration)
	c := status.GetCondition(st, appsv1.ReplicaSetReplicaFailure)
	fmt.Println(c.Type, c.Status, c.Reason)

	calls := len(client.Actions())
	again := status.CalculateReplicaSetStatus(updated, pods, nil, manageErr, now)
	if _, err := status.UpdateReplicaSetStatus(ctx, rsClient, updated, again); err != nil {
		panic(err)
	}
	fmt.Println("API calls in the steady state:", len(client.Actions())-calls)
	// Output:
	// replicas=2 ready=2 available=1 observedGeneration=1
	// ReplicaFailure True FailedCreate
	// API calls in the steady state: 0
}

// CountReplicas serves any workload controller, not only ReplicaSets.
func ExampleCountReplicas() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	template := map[string]string{"app": "db", "tier": "data"}
	pods := []*v1.Pod{
		readyPod("db-0", map[string]string{"app": "db", "tier": "data", "shard": "0"}, now.Add(-time.Hour)),
		readyPod("db-1", map[string]string{"app": "db"}, now),
		{ObjectMeta: metav1.ObjectMeta{Name: "db-2", Labels: template}},
	}
	c := status.CountReplicas(pods, template, 60, now)
	fmt.Printf("%+v\n", c)
	// Output:
	// {Replicas:3 FullyLabeledReplicas:2 ReadyReplicas:2 AvailableReplicas:1}
}

// ReplicationControllers go through the same rules, with their own condition
// type and without terminatingReplicas.
func ExampleCalculateReplicationControllerStatus() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	labels := map[string]string{"app": "legacy"}
	rc := &v1.ReplicationController{
		Spec: v1.ReplicationControllerSpec{
			Replicas: ptr.To[int32](1),
			Selector: labels,
			Template: &v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}},
		},
	}
	pods := []*v1.Pod{readyPod("a", labels, now), readyPod("b", labels, now)}
	st := status.CalculateReplicationControllerStatus(rc, pods, errors.New("delete failed"), now)
	c := status.GetReplicationControllerCondition(st, v1.ReplicationControllerReplicaFailure)
	fmt.Println(st.Replicas, c.Reason, c.Message)

	// Once manageReplicas succeeds the condition goes away.
	rc.Status = st
	st = status.CalculateReplicationControllerStatus(rc, pods[:1], nil, now)
	fmt.Println(st.Replicas, st.Conditions == nil)
	// Output:
	// 2 FailedDelete delete failed
	// 1 true
}

// SetCondition keeps the transition time of a condition whose status and
// reason did not change.
func ExampleSetCondition() {
	var st appsv1.ReplicaSetStatus
	first := appsv1.ReplicaSetCondition{Type: appsv1.ReplicaSetReplicaFailure, Status: v1.ConditionTrue,
		Reason: status.ReasonFailedCreate, LastTransitionTime: metav1.NewTime(time.Unix(100, 0).UTC())}
	status.SetCondition(&st, first)
	later := first
	later.LastTransitionTime = metav1.NewTime(time.Unix(200, 0).UTC())
	status.SetCondition(&st, later)
	fmt.Println(st.Conditions[0].LastTransitionTime.Unix())
	status.RemoveCondition(&st, appsv1.ReplicaSetReplicaFailure)
	fmt.Println(st.Conditions == nil)
	// Output:
	// 100
	// true
}

// Progress keeps a rolling set's Progressing condition: a step forward
// renews it, and a rollout with no step for longer than the deadline is
// reported stuck.
func ExampleProgress() {
	start := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	deadline := int32(600)
	in := status.ProgressInput{
		Kind: "WorkerSet", Name: "web", RevisionKind: "ControllerRevision", Revision: "web-7d9",
		Desired: 3, DeadlineSeconds: &deadline,
		Previous: status.ProgressCounts{Replicas: 3, UpdatedReplicas: 0, ReadyReplicas: 3, AvailableReplicas: 3},
		Current:  status.ProgressCounts{Replicas: 4, UpdatedReplicas: 1, ReadyReplicas: 3, AvailableReplicas: 3},
	}
	conds, recheck := status.Progress(nil, in, start)
	fmt.Println(conds[0].Reason, recheck)

	// Eleven minutes on, nothing moved.
	in.Previous = in.Current
	conds, recheck = status.Progress(conds, in, start.Add(11*time.Minute))
	fmt.Println(conds[0].Status, conds[0].Reason, recheck)
	fmt.Println(conds[0].Message)
	// Output:
	// ReplicaSetUpdated 10m1s
	// False ProgressDeadlineExceeded 0s
	// ControllerRevision "web-7d9" has timed out progressing.
}
