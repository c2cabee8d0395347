package podset_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ctrlkit/ctrlkit/podset"
)

// TrimPod goes on the pod informer before it starts; the controller then
// caches only the fields it reads.
func ExampleTrimPod() {
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	if err := factory.Core().V1().Pods().Informer().SetTransform(podset.TrimPod); err != nil {
		fmt.Println(err)
		return
	}

	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", Labels: map[string]string{"app": "web"},
			Annotations: map[string]string{"note": "not read by the controller"}},
		Spec:   v1.PodSpec{NodeName: "node-1", Containers: []v1.Container{{Name: "web", Image: "nginx"}}},
		Status: v1.PodStatus{Phase: v1.PodRunning, PodIP: "10.0.0.7"},
	}
	out, _ := podset.TrimPod(pod)
	trimmed := out.(*v1.Pod)
	fmt.Println(trimmed.Name, trimmed.Labels["app"], trimmed.Spec.NodeName, trimmed.Status.Phase)
	fmt.Println(len(trimmed.Spec.Containers), trimmed.Status.PodIP == "", trimmed.Annotations == nil)
	// Output:
	// web-1 web node-1 Running
	// 0 true true
}
