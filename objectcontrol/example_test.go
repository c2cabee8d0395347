package objectcontrol_test

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
)

// A controller creating the Service its owner needs, and a ConfigMap it
// shares with others (no controller reference), through client-go.
func Example() {
	ctx := context.Background()
	client := fake.NewClientset()
	recorder := record.NewFakeRecorder(10)
	owner := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-1"}}
	ref := metav1.NewControllerRef(owner, appsv1.SchemeGroupVersion.WithKind("Deployment"))

	services := objectcontrol.New("Service", objectcontrol.TypedWriter(
		func(ns string) objectcontrol.TypedClient[*v1.Service] { return client.CoreV1().Services(ns) }),
		recorder, types.StrategicMergePatchType)
	svc, err := services.Create(ctx, "default", &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}}, owner, ref)
	fmt.Println(svc.Name, metav1.GetControllerOf(svc).Name, err)

	configMaps := objectcontrol.New("ConfigMap", objectcontrol.TypedWriter(
		func(ns string) objectcontrol.TypedClient[*v1.ConfigMap] { return client.CoreV1().ConfigMaps(ns) }),
		recorder, types.StrategicMergePatchType)
	cm, err := configMaps.Create(ctx, "default", &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "shared"}}, owner, nil)
	fmt.Println(cm.Name, metav1.GetControllerOf(cm) == nil, err)

	fmt.Println(<-recorder.Events)
	fmt.Println(<-recorder.Events)
	// Output:
	// web web <nil>
	// shared true <nil>
	// Normal SuccessfulCreate Created Service: web
	// Normal SuccessfulCreate Created ConfigMap: shared
}

// Fake stands in for a Control in controller tests; CreateLimit simulates
// a quota.
func ExampleFake() {
	owner := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db", UID: "uid-1"}}
	ref := metav1.NewControllerRef(owner, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))
	fake := &objectcontrol.Fake[*v1.PersistentVolumeClaim]{CreateLimit: 1}
	for _, name := range []string{"data-0", "data-1"} {
		_, err := fake.Create(context.Background(), "default", &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}}, owner, ref)
		fmt.Println(name, err)
	}
	fmt.Println("recorded:", len(fake.Created), fake.Created[0].Name)
	// Output:
	// data-0 <nil>
	// data-1 not creating object, limit 1 already reached (create call 2)
	// recorded: 1 data-0
}
