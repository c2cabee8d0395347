package shard

import (
	"errors"
	"hash/fnv"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func randomUID(r *rand.Rand) string {
	const hex = "0123456789abcdef"
	b := make([]byte, 36)
	for i := range b {
		switch i {
		case 8, 13, 18, 23:
			b[i] = '-'
		default:
			b[i] = hex[r.IntN(16)]
		}
	}
	return string(b)
}

// Hash is FNV-1a, the API server's shard hash; e2e/parity checks it against
// apimachinery's own (which needs v0.36, above this module's floor).
func TestHashMatchesStdlib(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	inputs := []string{"", "a", "default", "kube-system", "ünïcødé"}
	for range 200 {
		inputs = append(inputs, randomUID(r))
	}
	for _, s := range inputs {
		std := fnv.New64a()
		_, _ = std.Write([]byte(s))
		if got, want := Hash(s), std.Sum64(); got != want {
			t.Fatalf("Hash(%q) = %#x, hash/fnv says %#x", s, got, want)
		}
	}
}

func TestHashDoesNotAllocate(t *testing.T) {
	s := "7f1c2a9e-1111-2222-3333-444455556666"
	if n := testing.AllocsPerRun(100, func() { _ = Hash(s) }); n != 0 {
		t.Fatalf("Hash allocates %v times", n)
	}
}

func TestHashObject(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "p", UID: "uid-1"}}
	if h, err := HashObject(pod, KeyUID); err != nil || h != Hash("uid-1") {
		t.Fatalf("by uid: %#x, %v", h, err)
	}
	if h, err := HashObject(pod, KeyNamespace); err != nil || h != Hash("ns1") {
		t.Fatalf("by namespace: %#x, %v", h, err)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	if h, err := HashObject(node, KeyNamespace); err != nil || h != Hash("") {
		t.Fatalf("cluster-scoped by namespace: %#x, %v", h, err)
	}
	if _, err := HashObject(pod, Key("object.metadata.name")); !errors.Is(err, ErrUnsupportedKey) {
		t.Fatalf("unknown key: %v", err)
	}
	if _, err := HashObject(nil, KeyUID); err == nil {
		t.Fatal("nil object: no error")
	}
}

func TestHashController(t *testing.T) {
	yes := true
	child := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "child", OwnerReferences: []metav1.OwnerReference{
		{UID: "other", Name: "o"},
		{UID: types.UID("owner"), Name: "rs", Controller: &yes},
	}}}
	if h, err := HashController(child); err != nil || h != Hash("owner") {
		t.Fatalf("child: %#x, %v; want the controller's hash", h, err)
	}
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "orphan"}}
	if h, err := HashController(orphan); err != nil || h != Hash("orphan") {
		t.Fatalf("orphan: %#x, %v; want its own hash", h, err)
	}
	if _, err := HashController(nil); err == nil {
		t.Fatal("nil object: no error")
	}
}
