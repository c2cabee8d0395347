package shard_test

import (
	"flag"
	"fmt"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/ctrlkit/ctrlkit/shard"
)

// A binary binds the ring's flags, checks them before it starts anything,
// and joins the ring they name.
func ExampleFlags() {
	var ring shard.Flags
	fs := flag.NewFlagSet("my-controller", flag.ContinueOnError)
	ring.AddFlags(fs, "kube-system", "replica-0")
	if err := fs.Parse([]string{"--shard-ring=my-controller", "--shard-lease-duration=2500ms"}); err != nil {
		panic(err)
	}
	fmt.Println(ring.Validate())

	_ = fs.Set("shard-lease-duration", "20s")
	fmt.Println(ring.Validate())
	m, err := ring.NewMember(fake.NewClientset().CoordinationV1())
	if err != nil {
		panic(err)
	}
	fmt.Println(shard.LeaseName(ring.Ring, ring.Identity), m.Held().Empty())
	// Output:
	// --shard-lease-duration must be a positive whole number of seconds, not 2.5s
	// --shard-renew-interval (4s) plus --shard-safety-margin (3s) must be shorter than --shard-lease-duration (2.5s): a healthy replica would lose its share between renewals
	// <nil>
	// my-controller-replica-0 true
}
