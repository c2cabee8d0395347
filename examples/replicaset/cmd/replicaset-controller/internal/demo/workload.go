package demo

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/util/retry"
)

// Progress is what the demo prints after each step: the owner's desired,
// current, ready and available counts, plus the pods it can see, so that a
// step is only over once the API agrees with the status.
type Progress struct {
	Desired, Current, Ready, Available int32
	UpToDate                           bool // status reflects the latest spec
	Pods, Running                      int  // pods selected; of those Running and Ready
}

// Settled reports whether the owner has all it asked for, and its status
// says so.
func (p Progress) Settled() bool {
	d := int(p.Desired)
	return p.UpToDate && p.Current == p.Desired && p.Ready == p.Desired && p.Available == p.Desired &&
		p.Pods == d && p.Running == d
}

func (p Progress) String() string {
	return fmt.Sprintf("desired=%3d current=%3d ready=%3d available=%3d", p.Desired, p.Current, p.Ready, p.Available)
}

// workload is the demo's handle on its owner, one per kind.
type workload interface {
	// kind names the owner's kind in the demo's output.
	kind() string
	create(ctx context.Context, replicas int32) error
	scale(ctx context.Context, replicas int32) error
	read(ctx context.Context) (Progress, error)
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

func newWorkload(kind Kind, client kubernetes.Interface) workload {
	if kind == ReplicationController {
		return ownerWorkload[*v1.ReplicationController]{rcOwner{client.CoreV1().ReplicationControllers(demoNamespace)}, client}
	}
	return ownerWorkload[*appsv1.ReplicaSet]{rsOwner{client.AppsV1().ReplicaSets(demoNamespace)}, client}
}

// owner is the typed access to the demo's owner that differs between kinds.
type owner[T any] interface {
	kind() string
	create(ctx context.Context, replicas int32) error
	get(ctx context.Context) (T, error)
	update(ctx context.Context, obj T) error
	// setReplicas sets spec.replicas and bumps the generation, which the
	// simulated API does not maintain.
	setReplicas(obj T, n int32)
	// observe reads spec and status into a Progress.
	observe(obj T) Progress
}

// ownerWorkload is the workload of one kind: scale and read are written
// once over its owner.
type ownerWorkload[T any] struct {
	owner[T]
	client kubernetes.Interface
}

func (w ownerWorkload[T]) scale(ctx context.Context, n int32) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := w.get(ctx)
		if err != nil {
			return err
		}
		w.setReplicas(obj, n)
		return w.update(ctx, obj)
	})
}

func (w ownerWorkload[T]) read(ctx context.Context) (Progress, error) {
	obj, err := w.get(ctx)
	if err != nil {
		return Progress{}, err
	}
	return countPods(ctx, w.client, w.observe(obj))
}

// rsOwner is the demo's ReplicaSet.
type rsOwner struct {
	rss appsv1client.ReplicaSetInterface
}

func (rsOwner) kind() string { return "ReplicaSet" }

func (o rsOwner) create(ctx context.Context, n int32) error {
	_, err := o.rss.Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: demoName, Namespace: demoNamespace, Generation: 1},
		Spec: appsv1.ReplicaSetSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: demoLabels},
			Template: demoTemplate()},
	}, metav1.CreateOptions{})
	return err
}

func (o rsOwner) get(ctx context.Context) (*appsv1.ReplicaSet, error) {
	return o.rss.Get(ctx, demoName, metav1.GetOptions{})
}

func (o rsOwner) update(ctx context.Context, rs *appsv1.ReplicaSet) error {
	_, err := o.rss.Update(ctx, rs, metav1.UpdateOptions{})
	return err
}

func (rsOwner) setReplicas(rs *appsv1.ReplicaSet, n int32) { rs.Spec.Replicas = &n; rs.Generation++ }

func (rsOwner) observe(rs *appsv1.ReplicaSet) Progress {
	return observed(*rs.Spec.Replicas, rs.Generation, rs.Status.ObservedGeneration,
		rs.Status.Replicas, rs.Status.ReadyReplicas, rs.Status.AvailableReplicas)
}

// rcOwner is the demo's ReplicationController.
type rcOwner struct {
	rcs corev1client.ReplicationControllerInterface
}

func (rcOwner) kind() string { return "ReplicationController" }

func (o rcOwner) create(ctx context.Context, n int32) error {
	t := demoTemplate()
	_, err := o.rcs.Create(ctx, &v1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: demoName, Namespace: demoNamespace, Generation: 1},
		Spec:       v1.ReplicationControllerSpec{Replicas: &n, Selector: demoLabels, Template: &t},
	}, metav1.CreateOptions{})
	return err
}

func (o rcOwner) get(ctx context.Context) (*v1.ReplicationController, error) {
	return o.rcs.Get(ctx, demoName, metav1.GetOptions{})
}

func (o rcOwner) update(ctx context.Context, rc *v1.ReplicationController) error {
	_, err := o.rcs.Update(ctx, rc, metav1.UpdateOptions{})
	return err
}

func (rcOwner) setReplicas(rc *v1.ReplicationController, n int32) {
	rc.Spec.Replicas = &n
	rc.Generation++
}

func (rcOwner) observe(rc *v1.ReplicationController) Progress {
	return observed(*rc.Spec.Replicas, rc.Generation, rc.Status.ObservedGeneration,
		rc.Status.Replicas, rc.Status.ReadyReplicas, rc.Status.AvailableReplicas)
}

// observed is the Progress an owner's spec and status show.
func observed(desired int32, generation, observedGeneration int64, current, ready, available int32) Progress {
	return Progress{Desired: desired, Current: current, Ready: ready, Available: available,
		UpToDate: observedGeneration >= generation}
}

// countPods fills in what the API says about the demo's pods.
func countPods(ctx context.Context, client kubernetes.Interface, p Progress) (Progress, error) {
	pods, err := listDemoPods(ctx, client)
	if err != nil {
		return p, err
	}
	p.Pods = len(pods)
	for _, pod := range pods {
		if pod.Status.Phase == v1.PodRunning && isReady(pod) {
			p.Running++
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
