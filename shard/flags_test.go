package shard

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes/fake"
)

func parseFlags(t *testing.T, args ...string) Flags {
	t.Helper()
	var f Flags
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.AddFlags(fs, "ns", "replica-0")
	require.NoError(t, fs.Parse(args))
	return f
}

func TestFlagsDefaults(t *testing.T) {
	f := parseFlags(t)
	assert.False(t, f.Enabled())
	assert.Equal(t, Flags{By: ByUID, Namespace: "ns", Identity: "replica-0", LeaseDuration: DefaultLeaseDuration,
		RenewInterval: DefaultRenewInterval, SafetyMargin: DefaultSafetyMargin, SweepInterval: DefaultSweepInterval}, f)
	require.NoError(t, f.Validate(), "the defaults are valid")
	assert.Equal(t, KeyUID, f.Key())
	assert.True(t, f.Children().Moves, "children follow their controller")
	assert.Empty(t, f.Children().Server)
	f = parseFlags(t, "--shard-ring=r", "--shard-by=namespace")
	assert.True(t, f.Enabled())
	assert.Equal(t, KeyNamespace, f.Key())
	assert.Equal(t, KeyNamespace, f.Children().Server, "children stay with their owner's namespace")
	assert.False(t, f.Children().Moves)
}

func TestFlagsValidate(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--shard-by=name"}, `--shard-by must be uid or namespace, not "name"`},
		{[]string{"--shard-identity="}, "--shard-ring needs --shard-identity and --shard-lease-namespace"},
		{[]string{"--shard-lease-namespace="}, "--shard-ring needs --shard-identity and --shard-lease-namespace"},
		{[]string{"--shard-lease-duration=5500ms"}, "--shard-lease-duration must be a positive whole number of seconds, not 5.5s"},
		{[]string{"--shard-sweep-interval=0"}, "--shard-sweep-interval must be positive, not 0s"},
		{[]string{"--shard-lease-duration=5s", "--shard-renew-interval=3s", "--shard-safety-margin=2s"},
			"--shard-renew-interval (3s) plus --shard-safety-margin (2s) must be shorter than --shard-lease-duration (5s)"},
		{[]string{"--shard-safety-margin=-1s"}, "--shard-renew-interval (4s) plus --shard-safety-margin (-1s)"},
	} {
		err := parseFlags(t, append([]string{"--shard-ring=r"}, tc.args...)...).Validate()
		require.Error(t, err, strings.Join(tc.args, " "))
		assert.Contains(t, err.Error(), tc.want)
	}
}

// TestFlagsNewMember: every Flags that Validate accepts makes a member
// (NewMember would panic on a write timeout too long for the Lease).
func TestFlagsNewMember(t *testing.T) {
	client := fake.NewClientset().CoordinationV1()
	for _, args := range [][]string{
		nil,
		{"--shard-lease-duration=3s", "--shard-renew-interval=1s", "--shard-safety-margin=1s"},
		{"--shard-lease-duration=60s", "--shard-renew-interval=1s", "--shard-safety-margin=0s"},
	} {
		f := parseFlags(t, append([]string{"--shard-ring=r"}, args...)...)
		require.NoError(t, f.Validate())
		m, err := f.NewMember(client)
		require.NoError(t, err, args)
		assert.Equal(t, f.LeaseDuration, m.cfg.leaseDuration)
		assert.Less(t, m.cfg.renewInterval+m.cfg.writeTimeout, m.cfg.leaseDuration-m.cfg.safetyMargin)
		assert.LessOrEqual(t, m.cfg.writeTimeout, DefaultWriteTimeout)
	}
	_, err := Flags{Ring: "r", Namespace: "ns", Identity: "Not A Name!", LeaseDuration: 15 * time.Second,
		RenewInterval: time.Second}.NewMember(client)
	require.ErrorContains(t, err, `joining ring "r"`)
}
