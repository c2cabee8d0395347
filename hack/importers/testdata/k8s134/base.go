// Command k8s134 stands for a controller on Kubernetes 1.34's libraries
// that imports two ctrlkit packages (ctrlkit.go).
package main

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func main() {
	client := fake.NewClientset()
	pods := []*v1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}},
	}
	fmt.Println(client.Discovery() != nil, len(pods), useCtrlkit(pods))
}
