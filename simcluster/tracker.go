package simcluster

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	k8stesting "k8s.io/client-go/testing"
)

// nameSuffixAlphabet and nameSuffixLength mirror the apiserver's generated
// names: consonants and digits only, so a suffix never spells a word.
const (
	nameSuffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"
	nameSuffixLength   = 5
)

// apiTracker wraps the fake clientset's object tracker with the metadata an
// apiserver assigns. Writes are serialised by mu so that the resourceVersion
// check and the write it guards happen as one step.
type apiTracker struct {
	k8stesting.ObjectTracker

	mu  sync.Mutex
	rv  int64
	now func() time.Time
}

func (t *apiTracker) nextResourceVersion() string {
	t.rv++
	return strconv.FormatInt(t.rv, 10)
}

// Create assigns what the apiserver would: a name from generateName, a UID,
// a creation timestamp and a fresh resourceVersion.
func (t *apiTracker) Create(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.CreateOptions) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("simulated apiserver: create %s: %w", gvr.Resource, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if m.GetName() == "" {
		if m.GetGenerateName() == "" {
			return apierrors.NewBadRequest("simulated apiserver: name or generateName is required")
		}
		m.SetName(m.GetGenerateName() + randomSuffix())
	}
	m.SetUID(uuid.NewUUID())
	m.SetCreationTimestamp(metav1.NewTime(t.now()))
	m.SetResourceVersion(t.nextResourceVersion())
	return t.ObjectTracker.Create(gvr, obj, ns, opts...)
}

// Update refuses a stale resourceVersion with a Conflict, as a real apiserver
// does; an empty resourceVersion means an unconditional update.
func (t *apiTracker) Update(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.UpdateOptions) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("simulated apiserver: update %s: %w", gvr.Resource, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	current, err := t.ObjectTracker.Get(gvr, ns, m.GetName())
	if err != nil {
		return err
	}
	cm, err := meta.Accessor(current)
	if err != nil {
		return fmt.Errorf("simulated apiserver: update %s: %w", gvr.Resource, err)
	}
	if rv := m.GetResourceVersion(); rv != "" && rv != cm.GetResourceVersion() {
		return apierrors.NewConflict(gvr.GroupResource(), m.GetName(),
			fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	// Identity fields are owned by the server, never by the writer.
	m.SetUID(cm.GetUID())
	m.SetCreationTimestamp(cm.GetCreationTimestamp())
	m.SetResourceVersion(t.nextResourceVersion())
	return t.ObjectTracker.Update(gvr, obj, ns, opts...)
}

// Patch receives the already patched object from the fake clientset's
// reaction; it only needs a new resourceVersion.
func (t *apiTracker) Patch(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("simulated apiserver: patch %s: %w", gvr.Resource, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	m.SetResourceVersion(t.nextResourceVersion())
	return t.ObjectTracker.Patch(gvr, obj, ns, opts...)
}

// Delete is serialised with the writes so that an update racing a delete
// sees either the object or NotFound, never half of each.
func (t *apiTracker) Delete(gvr schema.GroupVersionResource, ns, name string, opts ...metav1.DeleteOptions) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ObjectTracker.Delete(gvr, ns, name, opts...)
}

func randomSuffix() string {
	b := make([]byte, nameSuffixLength)
	for i := range b {
		b[i] = nameSuffixAlphabet[rand.IntN(len(nameSuffixAlphabet))]
	}
	return string(b)
}
