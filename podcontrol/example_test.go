package podcontrol_test

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/ctrlkit/ctrlkit/objectcontrol"
	"github.com/ctrlkit/ctrlkit/podcontrol"
)

// FakePodControl stands in for the API in controller tests; CreateLimit
// simulates a quota.
func ExampleFakePodControl() {
	owner := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "rs-uid"}}
	ref := metav1.NewControllerRef(owner, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
	template := &v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}
	fake := &podcontrol.FakePodControl{CreateLimit: 2}
	for i := range 3 {
		err := fake.CreatePods(context.Background(), "default", template, owner, ref)
		fmt.Println(i, err)
	}
	fmt.Println("recorded:", len(fake.Templates))
	// Output:
	// 0 <nil>
	// 1 <nil>
	// 2 not creating pod, limit 2 already reached (create call 3)
	// recorded: 2
}

// A controller that names its pods (worker-0, worker-1, ...) creates them
// with CreatePodWithName and owns a Service through objectcontrol.
func ExampleRealPodControl_CreatePodWithName() {
	ctx := context.Background()
	owner := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "trainer", Namespace: "default", UID: "uid-1"}}
	ref := metav1.NewControllerRef(owner, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
	client := fake.NewClientset()
	recorder := record.NewFakeRecorder(10)

	pods := podcontrol.NewRealPodControl(client, recorder)
	template := &v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"job": "trainer"}}}
	for i := range 2 {
		if err := pods.CreatePodWithName(ctx, "default", fmt.Sprintf("trainer-worker-%d", i), template, owner, ref); err != nil {
			fmt.Println(err)
		}
	}
	// Kinds other than pods are written through objectcontrol, with the
	// same events and rules.
	services := objectcontrol.New("Service",
		objectcontrol.TypedWriter(func(ns string) objectcontrol.TypedClient[*v1.Service] { return client.CoreV1().Services(ns) }),
		recorder, types.StrategicMergePatchType)
	svc, err := services.Create(ctx, "default", &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "trainer"}}, owner, ref)
	fmt.Println(svc.OwnerReferences[0].Name, err)
	for range 3 {
		fmt.Println(<-recorder.Events)
	}
	// Output:
	// trainer <nil>
	// Normal SuccessfulCreate Created pod: trainer-worker-0
	// Normal SuccessfulCreate Created pod: trainer-worker-1
	// Normal SuccessfulCreate Created Service: trainer
}
