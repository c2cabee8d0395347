package gang_test

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
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/examples/gang"
)

func TestGangsAdapter(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	require.NoError(t, indexer.Add(newGang("train", int64(4))))
	g := gang.Gangs{Indexer: indexer}
	got, err := g.Get(ns, "train")
	require.NoError(t, err)
	assert.EqualValues(t, 4, g.Replicas(got))
	_, err = g.Get(ns, "gone")
	assert.True(t, apierrors.IsNotFound(err), "a missing Gang is NotFound: %v", err)
	assert.Equal(t, gang.Kind, g.GroupVersionKind())
	assert.EqualValues(t, 1, g.Replicas(newGang("x", nil)), "absent is 1")
	assert.EqualValues(t, 0, g.Replicas(newGang("x", "many")), "malformed reads as 0 (NewChild refuses it first)")

	sel, err := g.Selector(got)
	require.NoError(t, err)
	assert.Equal(t, gang.Label+"=train", sel.String())

	pod, err := g.NewChild(got)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"role": "rank", gang.Label: "train"}, pod.Labels)
	assert.True(t, sel.Matches(labels.Set(pod.Labels)), "the selector matches the pods")
	assert.Empty(t, pod.Name, "the core names the child")
	require.Len(t, pod.Spec.Containers, 1)
	assert.Equal(t, "trainer:1", pod.Spec.Containers[0].Image)

	long := newGang(strings.Repeat("a", 64), int64(1))
	_, err = g.NewChild(long)
	assert.ErrorContains(t, err, "the name cannot be the value of "+gang.Label)
}

func TestPodsReady(t *testing.T) {
	k := gang.Pods{}
	p := &v1.Pod{}
	assert.False(t, k.Ready(p))
	p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}
	assert.True(t, k.Ready(p))
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

// adapterLines counts path's lines after the imports that are neither
// blank nor comments.
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
