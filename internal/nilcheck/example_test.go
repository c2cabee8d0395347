package nilcheck_test

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ctrlkit/ctrlkit/internal/nilcheck"
)

func ExampleIsNil() {
	// A typed nil in an interface is not == nil, yet has nothing to read.
	var rs *appsv1.ReplicaSet
	owners := []runtime.Object{rs, &appsv1.ReplicaSet{}, nil}
	for _, owner := range owners {
		fmt.Println(nilcheck.IsNil(owner))
	}
	// Output:
	// true
	// false
	// true
}
