package benchpair_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/ctrlkit/ctrlkit/internal/benchpair"
)

// make bench numbers its rounds; odd rounds run ctrlkit's half first. In a
// benchmark, pass its *testing.B, which fails on a malformed round.
func ExampleOrder() {
	defer os.Unsetenv(benchpair.EnvRound)
	for _, round := range []string{"1", "2"} {
		_ = os.Setenv(benchpair.EnvRound, round)
		fmt.Println(benchpair.Order(&testing.T{}, "ctrlkit", "clientgo"))
	}
	// Output:
	// [ctrlkit clientgo]
	// [clientgo ctrlkit]
}
