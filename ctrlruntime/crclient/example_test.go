package crclient_test

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/crclient"
	"github.com/ctrlkit/ctrlkit/podcontrol"
	"github.com/ctrlkit/ctrlkit/slowstart"
)

// Creating an owner's pods with slow start through a controller-runtime
// client; in a manager the client is mgr.GetClient() and the recorder
// mgr.GetEventRecorderFor(name).
func Example() {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	pc := crclient.NewPodControl(c, record.NewFakeRecorder(10))

	owner := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "uid-1"}}
	ref := metav1.NewControllerRef(owner, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
	template := &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
	}
	created, err := slowstart.Batch(ctx, 3, slowstart.InitialBatchSize, func(ctx context.Context) error {
		return pc.CreatePods(ctx, owner.Namespace, template, owner, ref)
	})
	fmt.Println("created:", created, "error:", err)

	pods := &corev1.PodList{}
	_ = c.List(ctx, pods, client.InNamespace("ns"))
	fmt.Println("pods owned by web:", len(pods.Items))
	// Output:
	// created: 3 error: <nil>
	// pods owned by web: 3
}

// A controller that names its pods by index (Job- or StatefulSet-like),
// with its own event reasons, through a controller-runtime client.
func ExampleNewPodControl_named() {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	recorder := record.NewFakeRecorder(10)
	pc := crclient.NewPodControl(c, recorder, podcontrol.WithEventReasons(podcontrol.EventReasons{SuccessfulCreate: "WorkerCreated"}))

	owner := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db", UID: "uid-1"}}
	ref := metav1.NewControllerRef(owner, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))
	template := &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "postgres"}}},
	}
	for i := range 2 {
		if err := pc.CreatePodWithName(ctx, owner.Namespace, fmt.Sprintf("db-%d", i), template, owner, ref); err != nil {
			fmt.Println(err)
		}
	}
	fmt.Println(<-recorder.Events)
	fmt.Println(<-recorder.Events)
	// Output:
	// Normal WorkerCreated Created pod: db-0
	// Normal WorkerCreated Created pod: db-1
}
