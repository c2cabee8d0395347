package simcluster_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ctrlkit/ctrlkit/simcluster"
)

// The simulated API assigns what an apiserver would: a generated name, a
// UID and a resourceVersion.
func ExampleNew() {
	c := simcluster.New(simcluster.WithNodes(2))
	pod, err := c.Client().CoreV1().Pods("default").Create(context.Background(), &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "web-", Namespace: "default"},
	}, metav1.CreateOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(pod.Name) == len("web-")+5, pod.UID != "", pod.ResourceVersion != "")
	fmt.Println(c.Nodes())
	// Output:
	// true true true
	// [sim-node-1 sim-node-2]
}
