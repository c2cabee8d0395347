package shardcr

import (
	"context"
	"sync"

	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/ctrlkit/ctrlkit/shard"
)

// Member is a shard.Member that runs as a manager Runnable on every replica,
// leader or not, and tells any number of subscribers when its share changes.
// Add it with mgr.Add; it joins the ring when the manager starts and leaves
// it (deleting its Lease) when the manager's context ends.
type Member struct {
	*shard.Member

	mu     sync.Mutex
	subs   map[int]chan struct{}
	nextID int
}

var (
	_ manager.Runnable               = (*Member)(nil)
	_ manager.LeaderElectionRunnable = (*Member)(nil)
)

// NewMember returns the member identity of ring, with its Lease in
// namespace (see shard.NewMember; client is a clientset's CoordinationV1()).
// The member's change callback is its own: a shard.WithOnChange in opts is
// replaced, so subscribe with Subscribe instead.
func NewMember(client coordinationv1client.LeasesGetter, namespace, ring, identity string, opts ...shard.Option) (*Member, error) {
	m := &Member{subs: map[int]chan struct{}{}}
	inner, err := shard.NewMember(client, namespace, ring, identity, append(opts, shard.WithOnChange(m.changed))...)
	if err != nil {
		return nil, err
	}
	m.Member = inner
	return m, nil
}

// Start runs the member until ctx ends (shard.Member.Run). The manager calls
// it once.
func (m *Member) Start(ctx context.Context) error { return m.Run(ctx) }

// NeedLeaderElection is false: every replica is a member, that is the point
// of sharding.
func (m *Member) NeedLeaderElection() bool { return false }

// Subscribe returns a channel that receives a value after each change of
// the member's held ranges, and a function that ends the subscription.
// Changes that arrive while a value is still unread are merged into it, so
// a subscriber reads Held() when it wakes rather than counting changes.
func (m *Member) Subscribe() (changed <-chan struct{}, cancel func()) {
	ch := make(chan struct{}, 1)
	m.mu.Lock()
	id := m.nextID
	m.nextID++
	m.subs[id] = ch
	m.mu.Unlock()
	return ch, func() {
		m.mu.Lock()
		delete(m.subs, id)
		m.mu.Unlock()
	}
}

// changed is the member's change callback: it runs on the goroutine of
// Run, so it never blocks.
func (m *Member) changed(shard.Ranges) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ch := range m.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
