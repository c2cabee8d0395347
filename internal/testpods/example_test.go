package testpods_test

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ctrlkit/ctrlkit/internal/testpods"
)

func ExampleNewN() {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "rs-uid"}}
	gvk := appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	for _, p := range testpods.NewN(2, "web-", rs, gvk, v1.PodRunning, map[string]string{"app": "web"}, true) {
		fmt.Println(p.Name, p.Namespace, p.Spec.NodeName, metav1.GetControllerOf(p).Name)
	}
	// Output:
	// web-0 default node-1 web
	// web-1 default node-1 web
}
