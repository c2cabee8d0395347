package main

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// progress is what the demo prints after each step: the owner's desired,
// current, ready and available counts, plus the pods it can see, so that a
// step is only over once the API agrees with the status.
type progress struct {
	desired, current, ready, available int32
	upToDate                           bool // status reflects the latest spec
	pods, running                      int  // pods selected; of those Running and Ready
}

func (p progress) settled() bool {
	d := int(p.desired)
	return p.upToDate && p.current == p.desired && p.ready == p.desired && p.available == p.desired &&
		p.pods == d && p.running == d
}

func (p progress) String() string {
	return fmt.Sprintf("desired=%3d current=%3d ready=%3d available=%3d", p.desired, p.current, p.ready, p.available)
}

// workload is the demo's handle on its owner, one per kind. Only the
// create, scale and read of the owner differ between kinds.
type workload struct {
	kind   string
	create func(ctx context.Context, replicas int32) error
	scale  func(ctx context.Context, replicas int32) error
	read   func(ctx context.Context) (progress, error)
}

const (
	demoNamespace = "default"
	demoName      = "demo"
)

var demoLabels = map[string]string{"app": "demo"}

func demoTemplate() v1.PodTemplateSpec {
	return v1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: demoLabels},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "web", Image: "registry.k8s.io/pause:3.10"}}},
	}
}

// ownerAPI is the typed access a workload needs to its owner; scale and read
// are written once over it.
type ownerAPI[T any] struct {
	get    func(ctx context.Context) (T, error)
	update func(ctx context.Context, obj T) error
	// setReplicas sets spec.replicas and bumps the generation, which the
	// simulated API does not maintain.
	setReplicas func(obj T, n int32)
	// observe reads spec and status into a progress.
	observe func(obj T) progress
}

func (a ownerAPI[T]) scale(ctx context.Context, n int32) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := a.get(ctx)
		if err != nil {
			return err
		}
		a.setReplicas(obj, n)
		return a.update(ctx, obj)
	})
}

func (a ownerAPI[T]) reader(client kubernetes.Interface) func(ctx context.Context) (progress, error) {
	return func(ctx context.Context) (progress, error) {
		obj, err := a.get(ctx)
		if err != nil {
			return progress{}, err
		}
		return countPods(ctx, client, a.observe(obj))
	}
}

func newWorkload(kind string, client kubernetes.Interface) workload {
	if kind == kindReplicationController {
		rcs := client.CoreV1().ReplicationControllers(demoNamespace)
		api := ownerAPI[*v1.ReplicationController]{
			get: func(ctx context.Context) (*v1.ReplicationController, error) {
				return rcs.Get(ctx, demoName, metav1.GetOptions{})
			},
			update: func(ctx context.Context, rc *v1.ReplicationController) error {
				_, err := rcs.Update(ctx, rc, metav1.UpdateOptions{})
				return err
			},
			setReplicas: func(rc *v1.ReplicationController, n int32) { rc.Spec.Replicas = &n; rc.Generation++ },
			observe: func(rc *v1.ReplicationController) progress {
				s := rc.Status
				return progress{desired: *rc.Spec.Replicas, current: s.Replicas, ready: s.ReadyReplicas,
					available: s.AvailableReplicas, upToDate: s.ObservedGeneration >= rc.Generation}
			},
		}
		return workload{
			kind: "ReplicationController",
			create: func(ctx context.Context, n int32) error {
				t := demoTemplate()
				_, err := rcs.Create(ctx, &v1.ReplicationController{
					ObjectMeta: metav1.ObjectMeta{Name: demoName, Namespace: demoNamespace, Generation: 1},
					Spec:       v1.ReplicationControllerSpec{Replicas: &n, Selector: demoLabels, Template: &t},
				}, metav1.CreateOptions{})
				return err
			},
			scale: api.scale,
			read:  api.reader(client),
		}
	}
	rss := client.AppsV1().ReplicaSets(demoNamespace)
	api := ownerAPI[*appsv1.ReplicaSet]{
		get: func(ctx context.Context) (*appsv1.ReplicaSet, error) {
			return rss.Get(ctx, demoName, metav1.GetOptions{})
		},
		update: func(ctx context.Context, rs *appsv1.ReplicaSet) error {
			_, err := rss.Update(ctx, rs, metav1.UpdateOptions{})
			return err
		},
		setReplicas: func(rs *appsv1.ReplicaSet, n int32) { rs.Spec.Replicas = &n; rs.Generation++ },
		observe: func(rs *appsv1.ReplicaSet) progress {
			s := rs.Status
			return progress{desired: *rs.Spec.Replicas, current: s.Replicas, ready: s.ReadyReplicas,
				available: s.AvailableReplicas, upToDate: s.ObservedGeneration >= rs.Generation}
		},
	}
	return workload{
		kind: "ReplicaSet",
		create: func(ctx context.Context, n int32) error {
			_, err := rss.Create(ctx, &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Name: demoName, Namespace: demoNamespace, Generation: 1},
				Spec: appsv1.ReplicaSetSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: demoLabels},
					Template: demoTemplate()},
			}, metav1.CreateOptions{})
			return err
		},
		scale: api.scale,
		read:  api.reader(client),
	}
}

// countPods fills in what the API says about the demo's pods.
func countPods(ctx context.Context, client kubernetes.Interface, p progress) (progress, error) {
	pods, err := listDemoPods(ctx, client)
	if err != nil {
		return p, err
	}
	p.pods = len(pods)
	for _, pod := range pods {
		if pod.Status.Phase == v1.PodRunning && isReady(pod) {
			p.running++
		}
	}
	return p, nil
}

func listDemoPods(ctx context.Context, client kubernetes.Interface) ([]v1.Pod, error) {
	list, err := client.CoreV1().Pods(demoNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app=demo"})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

func isReady(pod v1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}
