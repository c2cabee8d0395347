package process_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/leaderelection"

	"github.com/ctrlkit/ctrlkit/process"
)

// A controller binary serves its probes, then runs its controller only
// while it holds the leader Lease; closing drain stops it gracefully, and
// the Lease is released once the work returned. (Built against client-go
// before v0.37, the watchdog's /healthz check reads the elector's last
// renewal without its lock, which the race detector reports while leading.)
func Example() {
	ctx := context.Background()
	client := fake.NewClientset()
	election := process.LeaderElection{Enabled: true, Namespace: "kube-system", Name: "my-controller",
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 100 * time.Millisecond}
	watchdog := leaderelection.NewLeaderHealthzAdaptor(election.LeaseDuration)
	health, err := process.Serve(ctx, "127.0.0.1:0", process.HealthHandler(watchdog, func() error { return nil }))
	if err != nil {
		panic(err)
	}
	defer health.Stop()

	drain := make(chan struct{})
	err = process.RunWithLease(ctx, drain, client, election, watchdog, func(ctx context.Context) {
		resp, err := http.Get("http://" + health.Addr() + "/readyz")
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("leading; /readyz says %s", body)
		close(drain) // a real controller drains its queue here
	})
	fmt.Println("stopped:", err)
	// Output:
	// leading; /readyz says ok
	// stopped: <nil>
}
