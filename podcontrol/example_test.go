package podcontrol_test

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
