package kubetest_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ctrlkit/ctrlkit/e2e/kubetest"
)

// Start a control plane, talk to it with client-go, and stop it. In a test
// suite, start it once in TestMain and give each test its own namespace.
func ExampleStart() {
	if err := createNamespace(context.Background()); err != nil {
		log.Fatal(err)
	}
	// Output: created namespace example
}

func createNamespace(ctx context.Context) (err error) {
	env, err := kubetest.Start(ctx)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, env.Stop()) }()

	client, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return err
	}
	ns, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "example"},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	fmt.Println("created namespace", ns.Name)
	return nil
}
