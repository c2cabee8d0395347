package history

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

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
