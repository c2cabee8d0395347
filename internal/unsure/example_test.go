package unsure_test

import (
	"context"
	"fmt"
	"time"

	"k8s.io/utils/clock"

	"github.com/ctrlkit/ctrlkit/internal/unsure"
)

func Example() {
	r := unsure.New[string](5*time.Minute, clock.RealClock{})
	r.Add("ns/web@uid", unsure.Write[string]{Namespace: "ns", Name: "web-x7k2p"})
	left, err := r.Resolve(context.Background(), "ns/web@uid", func(context.Context, unsure.Write[string]) (bool, error) {
		return true, nil // the create, sent again, answered AlreadyExists
	})
	fmt.Println(left, err)
	// Output: 0 <nil>
}
