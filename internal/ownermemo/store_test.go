package ownermemo_test

import (
	"fmt"
	"testing"

	"github.com/ctrlkit/ctrlkit/internal/ownermemo"
)

type memo struct{ uid string }

func Example() {
	var s ownermemo.Store[*memo]
	get := func(uid string) *memo {
		return s.Get("ns/web", func(m *memo) bool { return m.uid == uid }, func() *memo { return &memo{uid: uid} })
	}
	a, b := get("1"), get("1")
	c := get("2") // a re-created owner: a new memo
	fmt.Println(a == b, a == c, s.Len())
	s.Drop("ns/web")
	fmt.Println(s.Len())
	// Output:
	// true false 1
	// 0
}

func TestGetReplacesAnInvalidMemo(t *testing.T) {
	var s ownermemo.Store[*memo]
	calls := 0
	fresh := func() *memo { calls++; return &memo{uid: "x"} }
	first := s.Get("k", func(*memo) bool { return true }, fresh)
	if got := s.Get("k", func(*memo) bool { return false }, fresh); got == first || calls != 2 {
		t.Fatalf("an invalid memo was kept (fresh called %d times)", calls)
	}
	s.Drop("missing") // dropping an unknown key is harmless
	if s.Len() != 1 {
		t.Fatalf("Len %d, want 1", s.Len())
	}
}

func TestPeekMakesNoMemo(t *testing.T) {
	var s ownermemo.Store[*memo]
	if m, ok := s.Peek("k"); ok || m != nil {
		t.Fatalf("Peek of an empty store = %v, %v", m, ok)
	}
	if s.Len() != 0 {
		t.Fatal("Peek made a memo")
	}
	want := s.Get("k", func(*memo) bool { return true }, func() *memo { return &memo{uid: "x"} })
	if m, ok := s.Peek("k"); !ok || m != want {
		t.Fatalf("Peek = %v, %v, want the stored memo", m, ok)
	}
}
