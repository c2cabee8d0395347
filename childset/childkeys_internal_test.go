package childset

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// childKeys cuts the keys from one string; each must be childKey's.
func TestChildKeysAreChildKey(t *testing.T) {
	children := []*v1.ConfigMap{listingChild("a", nil), listingChild("bb", nil),
		{ObjectMeta: metav1.ObjectMeta{Name: "cluster-scoped"}}, listingChild("", nil), listingChild("d", nil)}
	children[4].Namespace = "other"
	keys := childKeys(children)
	want := make([]string, len(children))
	for i, c := range children {
		want[i] = childKey(c)
	}
	if !slices.Equal(keys, want) {
		t.Fatalf("childKeys %q, want %q", keys, want)
	}
	if keys := childKeys([]*v1.ConfigMap{}); len(keys) != 0 {
		t.Fatalf("childKeys of no child: %q", keys)
	}
}
