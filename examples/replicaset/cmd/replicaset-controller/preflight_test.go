package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/process"
	"github.com/ctrlkit/ctrlkit/shard"
)

// TestPreflightChecksOwnerGet: a Role without get on the owner kind would
// pass the list and watch checks and fail at the first adoption (its
// uncached re-read) or the first status conflict; preflight asks for it, in
// the watched namespace.
func TestPreflightChecksOwnerGet(t *testing.T) {
	for kind, want := range map[replicaset.Kind]string{
		replicaset.ReplicaSets:            `get resource "replicasets" in API group "apps" in namespace "team-a"`,
		replicaset.ReplicationControllers: `get resource "replicationcontrollers" in namespace "team-a"`,
	} {
		o := options{kind: kind, namespace: "team-a"}
		assert.Contains(t, fmt.Sprint(o.access()), want, kind)
	}
}

// TestPreflightChecksTheLeases: leader election needs its one Lease by
// name (and create, which no name restricts); a ring member every Lease of
// the ring's namespace.
func TestPreflightChecksTheLeases(t *testing.T) {
	leases := func(o options) (got []string) {
		for _, a := range o.access() {
			if a.Resource == "leases" {
				got = append(got, a.String())
			}
		}
		return got
	}
	o := options{kind: replicaset.ReplicaSets}
	assert.Empty(t, leases(o))
	o.lease = process.LeaderElection{Enabled: true, Namespace: "kube-system", Name: "lock"}
	assert.Equal(t, []string{
		`get resource "leases" in API group "coordination.k8s.io" named "lock" in namespace "kube-system"`,
		`update resource "leases" in API group "coordination.k8s.io" named "lock" in namespace "kube-system"`,
		`create resource "leases" in API group "coordination.k8s.io" in namespace "kube-system"`,
	}, leases(o))
	o.lease = process.LeaderElection{}
	o.shard = shard.Flags{Ring: "r", Namespace: "ring-ns"}
	assert.Len(t, leases(o), 5)
	for _, l := range leases(o) {
		assert.Contains(t, l, `in namespace "ring-ns"`)
		assert.NotContains(t, l, "named")
	}
}
