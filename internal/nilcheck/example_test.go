package nilcheck_test

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ctrlkit/ctrlkit/internal/nilcheck"
)

func ExampleIsNil() {
	var owner runtime.Object = (*appsv1.ReplicaSet)(nil)
	fmt.Println(owner == nil, nilcheck.IsNil(owner))
	// Output: false true
}
