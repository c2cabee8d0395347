// Package ownermemo keeps one memo per owner for the set cores, by the
// owner's work key. A core takes its owner's memo at the start of a sync
// and drops it when the owner is gone or synced elsewhere, so that no memo
// outlives the syncs that keep it current. Only one sync of a key runs at
// a time (the work queue's guarantee), so a memo needs no lock of its own;
// the Store's lock guards the map only.
package ownermemo

import "sync"

// Store holds one memo of type M per key. The zero Store is empty and
// ready to use.
type Store[M any] struct {
	mu      sync.Mutex
	byOwner map[string]M
}

// Get returns key's memo when valid accepts it; otherwise it stores and
// returns a new one from fresh.
func (s *Store[M]) Get(key string, valid func(M) bool, fresh func() M) M {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.byOwner[key]; ok && valid(m) {
		return m
	}
	m := fresh()
	if s.byOwner == nil {
		s.byOwner = map[string]M{}
	}
	s.byOwner[key] = m
	return m
}

// Peek returns key's memo, if any, without making one.
func (s *Store[M]) Peek(key string) (M, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.byOwner[key]
	return m, ok
}

// Drop forgets key's memo.
func (s *Store[M]) Drop(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byOwner, key)
}

// Len is the number of memos held.
func (s *Store[M]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byOwner)
}
