package shardcr_test

import (
	"context"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/shard"
)

// fixedShare is a share a test sets by hand: Guard grants what Holds says,
// and set signals subscribers as a Member does.
type fixedShare struct {
	mu     sync.Mutex
	held   shard.Ranges
	wanted shard.Ranges // besides held: wanted but not held now
	subs   map[int]chan struct{}
	next   int
	guards int // guards taken and not done
	taken  int // guards ever taken
}

func newFixedShare(held shard.Ranges) *fixedShare {
	return &fixedShare{held: held, subs: map[int]chan struct{}{}}
}

func (f *fixedShare) set(held shard.Ranges) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held = held
	for _, ch := range f.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (f *fixedShare) Holds(h uint64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.held.Contains(h)
}

func (f *fixedShare) Wants(h uint64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.held.Contains(h) || f.wanted.Contains(h)
}

func (f *fixedShare) Held() shard.Ranges {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.held
}

func (f *fixedShare) Guard(ctx context.Context, h uint64) (context.Context, context.CancelFunc, bool) {
	gctx, cancel := context.WithCancel(ctx)
	if !f.Holds(h) {
		cancel()
		return gctx, func() {}, false
	}
	f.mu.Lock()
	f.guards++
	f.taken++
	f.mu.Unlock()
	var once sync.Once
	return gctx, func() {
		once.Do(func() {
			cancel()
			f.mu.Lock()
			f.guards--
			f.mu.Unlock()
		})
	}, true
}

func (f *fixedShare) Subscribe() (<-chan struct{}, func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan struct{}, 1)
	id := f.next
	f.next++
	f.subs[id] = ch
	return ch, func() {
		f.mu.Lock()
		delete(f.subs, id)
		f.mu.Unlock()
	}
}

func (f *fixedShare) counts() (open, taken int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.guards, f.taken
}

// only is the share holding exactly h.
func only(h uint64) shard.Ranges { return shard.NewRanges(shard.Range{First: h, Last: h}) }

func replicaSet(name string, uid types.UID) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: uid},
	}
}

func podOf(name string, owner *appsv1.ReplicaSet) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name + "-uid")}}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)}}
	}
	return p
}

func uidHash(uid types.UID) uint64 { return shard.Hash(string(uid)) }
