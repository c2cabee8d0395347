package history

import (
	"fmt"
	"hash/fnv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/dump"
)

// sampleHash is FNV-32a of dump.ForHash of TestDeepHashObject's sample
// value, as computed before DeepHashObject was exported.
const sampleHash = 0x2b0f303c

func ptr[T any](v T) *T { return &v }

func TestComputeHashCollisionCount(t *testing.T) {
	tmpl := webTemplate()
	base := ComputeHash(tmpl, nil)
	assert.Equal(t, base, ComputeHash(tmpl.DeepCopy(), nil), "a copy hashes the same")
	assert.NotEqual(t, base, ComputeHash(tmpl, ptr[int32](0)), "a zero count still appends eight bytes")
	assert.NotEqual(t, ComputeHash(tmpl, ptr[int32](0)), ComputeHash(tmpl, ptr[int32](1)))
	assert.NotEqual(t, base, ComputeHash(&v1.PodTemplateSpec{}, nil))
	for _, r := range base {
		assert.True(t, strings.ContainsRune("bcdfghjklmnpqrstvwxz2456789", r), "SafeEncodeString alphabet: %q", base)
	}
	assert.Panics(t, func() { ComputeHash(nil, nil) })
}

func TestHashControllerRevision(t *testing.T) {
	raw := &appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: []byte(`{"a":1}`)}}
	other := &appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: []byte(`{"a":2}`)}}
	assert.NotEqual(t, HashControllerRevision(raw, nil), HashControllerRevision(other, nil))
	assert.NotEqual(t, HashControllerRevision(raw, nil), HashControllerRevision(raw, ptr[int32](0)), "a probe, even 0, changes the hash")
	assert.NotEqual(t, HashControllerRevision(raw, ptr[int32](1)), HashControllerRevision(raw, ptr[int32](2)))

	// With an Object the raw bytes don't count: upstream resets the hash
	// before dumping the object.
	obj := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	withObj := &appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: []byte(`{"a":1}`), Object: obj}}
	objOnly := &appsv1.ControllerRevision{Data: runtime.RawExtension{Object: obj}}
	assert.Equal(t, HashControllerRevision(objOnly, ptr[int32](3)), HashControllerRevision(withObj, ptr[int32](3)))
	assert.NotEqual(t, HashControllerRevision(objOnly, nil), HashControllerRevision(raw, nil))
	assert.Panics(t, func() { HashControllerRevision(nil, nil) })
}

func TestControllerRevisionName(t *testing.T) {
	assert.Equal(t, "web-abc", ControllerRevisionName("web", "abc"))
	long := strings.Repeat("x", 300)
	name := ControllerRevisionName(long, "0123456789")
	assert.Equal(t, strings.Repeat("x", 223)+"-0123456789", name)
	assert.LessOrEqual(t, len(name), 253)
	assert.Equal(t, strings.Repeat("y", 223)+"-h", ControllerRevisionName(strings.Repeat("y", 223), "h"), "exactly 223 bytes are kept whole")
}

// TestDeepHashObject pins the exported DeepHashObject to what ComputeHash
// and HashControllerRevision computed before it was exported: FNV over
// fmt's rendering of dump.ForHash, after a reset of the hasher.
func TestDeepHashObject(t *testing.T) {
	tmpl := webTemplate()

	h := fnv.New32a()
	DeepHashObject(h, *tmpl)
	assert.Equal(t, ComputeHash(tmpl, nil), encodeSum(h.Sum32()), "ComputeHash hashes through DeepHashObject")

	before := fnv.New32a()
	_, _ = fmt.Fprint(before, dump.ForHash(*tmpl))
	assert.Equal(t, before.Sum32(), h.Sum32(), "the same bytes as the hash written before DeepHashObject was exported")

	dirty := fnv.New32a()
	_, _ = dirty.Write([]byte("left over from an earlier use"))
	DeepHashObject(dirty, *tmpl)
	assert.Equal(t, h.Sum32(), dirty.Sum32(), "the hasher is reset first, as upstream's is")

	copied := fnv.New32a()
	DeepHashObject(copied, *tmpl.DeepCopy())
	assert.Equal(t, h.Sum32(), copied.Sum32(), "pointers are followed, not hashed by address")

	// A type of this test's own, so the value does not move with the Go
	// types of k8s.io/api: a change of rendering shows here first.
	type sample struct {
		Name   string
		Count  *int32
		Labels map[string]string
	}
	forward, backward := map[string]string{}, map[string]string{}
	for _, k := range []string{"a", "b", "c"} {
		forward[k] = k
	}
	for _, k := range []string{"c", "b", "a"} {
		backward[k] = k
	}
	s1, s2 := fnv.New32a(), fnv.New32a()
	DeepHashObject(s1, sample{Name: "web", Count: ptr[int32](3), Labels: forward})
	DeepHashObject(s2, sample{Name: "web", Count: ptr[int32](3), Labels: backward})
	assert.Equal(t, s1.Sum32(), s2.Sum32(), "map keys are rendered in order")
	assert.Equal(t, uint32(sampleHash), s1.Sum32())

	// HashControllerRevision: an Object replaces what Raw wrote.
	obj := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	rev := &appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: []byte(`{"a":1}`), Object: obj}}
	want := fnv.New32()
	_, _ = fmt.Fprint(want, dump.ForHash(obj))
	_, _ = want.Write([]byte("3"))
	assert.Equal(t, encodeSum(want.Sum32()), HashControllerRevision(rev, ptr[int32](3)))
}
