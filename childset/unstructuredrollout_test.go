package childset_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ctrlkit/ctrlkit/childset"
)

func TestNestedRollingUpdate(t *testing.T) {
	at := func(ru any) map[string]any {
		return map[string]any{"spec": map[string]any{"strategy": map[string]any{"rollingUpdate": ru}}}
	}
	got, err := childset.NestedRollingUpdate(map[string]any{}, "spec", "strategy", "rollingUpdate")
	require.NoError(t, err)
	assert.Equal(t, childset.RollingUpdate{}, got, "absent: the defaults")

	got, err = childset.NestedRollingUpdate(at(map[string]any{"maxSurge": "25%", "maxUnavailable": int64(0), "partition": float64(10)}),
		"spec", "strategy", "rollingUpdate")
	require.NoError(t, err)
	surge, zero := intstr.FromString("25%"), intstr.FromInt32(0)
	assert.Equal(t, childset.RollingUpdate{MaxSurge: &surge, MaxUnavailable: &zero, Partition: 10}, got)

	got, err = childset.NestedRollingUpdate(at(map[string]any{"maxSurge": float64(2)}), "spec", "strategy", "rollingUpdate")
	require.NoError(t, err)
	two := intstr.FromInt32(2)
	assert.Equal(t, &two, got.MaxSurge, "a JSON number is an int")

	for name, tc := range map[string]struct {
		ru   any
		want string
	}{
		"not an object":    {"x", "spec.strategy.rollingUpdate must be an object, not string"},
		"bool":             {map[string]any{"maxSurge": true}, "spec.strategy.rollingUpdate.maxSurge must be a number or a percentage string, not bool true"},
		"fraction":         {map[string]any{"maxUnavailable": 1.5}, "spec.strategy.rollingUpdate.maxUnavailable: must be a whole number in the int32 range, not 1.5"},
		"huge":             {map[string]any{"maxSurge": float64(1 << 40)}, "spec.strategy.rollingUpdate.maxSurge: must be a whole number in the int32 range, not 1.099511627776e+12"},
		"bad percent":      {map[string]any{"maxSurge": "x%"}, `spec.strategy.rollingUpdate: invalid rolling update: maxSurge "x%": must be a number or digits followed by '%' (such as 25%)`},
		"negative":         {map[string]any{"maxUnavailable": int64(-1)}, "spec.strategy.rollingUpdate: invalid rolling update: maxUnavailable -1: must not be negative"},
		"both zero":        {map[string]any{"maxSurge": int64(0), "maxUnavailable": "0%"}, "spec.strategy.rollingUpdate: invalid rolling update: maxSurge and maxUnavailable may not both be 0"},
		"over 100%":        {map[string]any{"maxUnavailable": "150%"}, `spec.strategy.rollingUpdate: invalid rolling update: maxUnavailable "150%": must not be greater than 100%`},
		"partition string": {map[string]any{"partition": "3"}, "spec.strategy.rollingUpdate.partition must be an integer, not string 3"},
		"partition < 0":    {map[string]any{"partition": int64(-2)}, "spec.strategy.rollingUpdate.partition must be between 0 and 2147483647, not -2"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := childset.NestedRollingUpdate(at(tc.ru), "spec", "strategy", "rollingUpdate")
			require.EqualError(t, err, tc.want)
		})
	}
	_, err = childset.NestedRollingUpdate(at(map[string]any{"maxSurge": int64(-1)}), "spec", "strategy", "rollingUpdate")
	assert.True(t, errors.Is(err, childset.ErrInvalidRollingUpdate), "Bounds' errors are wrapped: %v", err)
	_, err = childset.NestedRollingUpdate(map[string]any{"spec": "x"}, "spec", "strategy", "rollingUpdate")
	assert.Error(t, err, "a path through a non-object")
}

func ExampleNestedRollingUpdate() {
	owner := map[string]any{"spec": map[string]any{"strategy": map[string]any{
		"rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": int64(0), "partition": int64(2)},
	}}}
	u, err := childset.NestedRollingUpdate(owner, "spec", "strategy", "rollingUpdate")
	if err != nil {
		panic(err)
	}
	b, _ := u.Bounds(50)
	fmt.Printf("maxSurge %d, maxUnavailable %d, partition %d\n", b.MaxSurge, b.MaxUnavailable, u.Partition)

	owner["spec"].(map[string]any)["strategy"] = map[string]any{"rollingUpdate": map[string]any{"maxSurge": "lots"}}
	_, err = childset.NestedRollingUpdate(owner, "spec", "strategy", "rollingUpdate")
	fmt.Println(err)
	// Output:
	// maxSurge 13, maxUnavailable 0, partition 2
	// spec.strategy.rollingUpdate: invalid rolling update: maxSurge "lots": must be a number or digits followed by '%' (such as 25%)
}
