package workerset_test

import (
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/examples/workerset"
)

func TestSetGet(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	require.NoError(t, indexer.Add(newSet("web", int64(1))))
	s := workerset.Set{Indexer: indexer}
	got, err := s.Get(ns, "web")
	require.NoError(t, err)
	assert.Equal(t, "web", got.GetName())
	_, err = s.Get(ns, "gone")
	assert.True(t, apierrors.IsNotFound(err), "a missing WorkerSet is NotFound: %v", err)
	assert.Equal(t, "WorkerSet", s.GroupVersionKind().Kind)
}

func TestSetSpec(t *testing.T) {
	s := workerset.Set{}
	assert.EqualValues(t, 4, s.Replicas(newSet("a", int64(4))))
	assert.EqualValues(t, 1, s.Replicas(newSet("a", nil)), "absent is 1")
	assert.EqualValues(t, 0, s.Replicas(newSet("a", "x")), "malformed reads as 0 (NewChild refuses it first)")

	sel, err := s.Selector(newSet("a", nil))
	require.NoError(t, err)
	assert.Equal(t, "app=a", sel.String())
	noSel := newSet("a", nil)
	unstructured.RemoveNestedField(noSel.Object, "spec", "selector")
	_, err = s.Selector(noSel)
	assert.EqualError(t, err, "spec.selector is missing")

	w, err := s.NewChild(newSet("a", int64(2)))
	require.NoError(t, err)
	assert.Equal(t, workerset.WorkerKind, w.GroupVersionKind())
	assert.Equal(t, map[string]string{"app": "a"}, w.GetLabels())
	assert.Equal(t, map[string]any{"image": "worker:1", "cpus": int64(2)}, w.Object["spec"])
	assert.Empty(t, w.GetName(), "the core names the child")

	noSpec := newSet("a", nil)
	unstructured.RemoveNestedField(noSpec.Object, "spec", "template", "spec")
	w, err = s.NewChild(noSpec)
	require.NoError(t, err)
	assert.NotContains(t, w.Object, "spec", "no template spec, no Worker spec")

	for name, mutate := range map[string]func(*unstructured.Unstructured){
		"spec.replicas must be an integer": func(u *unstructured.Unstructured) { u.Object["spec"].(map[string]any)["replicas"] = true },
		"spec.template.metadata.labels": func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "app", "spec", "template", "metadata", "labels")
		},
		"spec.template.spec": func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "big", "spec", "template", "spec")
		},
		"spec.replicas must be between 0 and": func(u *unstructured.Unstructured) { u.Object["spec"].(map[string]any)["replicas"] = int64(-1) },
		"spec.template.metadata.labels: ":     func(u *unstructured.Unstructured) { u.Object["spec"].(map[string]any)["template"] = "t" },
	} {
		set := newSet("a", int64(1))
		mutate(set)
		_, err := s.NewChild(set)
		assert.ErrorContains(t, err, name)
	}
}

func TestWorkersReady(t *testing.T) {
	k := workerset.Workers{}
	w := newWorker("w", nil)
	assert.False(t, k.Ready(w), "no status")
	for v, want := range map[any]bool{true: true, false: false, "true": false, int64(1): false} {
		require.NoError(t, unstructured.SetNestedField(w.Object, v, "status", "ready"))
		assert.Equal(t, want, k.Ready(w), "status.ready %#v", v)
	}
	w.Object["status"] = "broken"
	assert.False(t, k.Ready(w), "a status that is not an object is not ready")
}

// TestAdapterSizeMatchesDoc recounts adapter.go's code lines (after the
// imports, without comments and blank lines) and checks doc.go states it.
func TestAdapterSizeMatchesDoc(t *testing.T) {
	n := adapterLines(t, "adapter.go")
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	m := regexp.MustCompile(`(\d+) lines without comments`).FindSubmatch(doc)
	require.NotNil(t, m, "doc.go states the adapter's size")
	stated, _ := strconv.Atoi(string(m[1]))
	assert.Equal(t, n, stated, "doc.go says %d lines, adapter.go has %d", stated, n)
	assert.LessOrEqual(t, n, 60, "the adapter stays small")
}

func adapterLines(t *testing.T, path string) int {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ImportsOnly)
	require.NoError(t, err)
	after := fset.Position(f.Decls[len(f.Decls)-1].End()).Line
	n := 0
	for i, line := range strings.Split(string(src), "\n") {
		line = strings.TrimSpace(line)
		if i+1 > after && line != "" && !strings.HasPrefix(line, "//") {
			n++
		}
	}
	return n
}
