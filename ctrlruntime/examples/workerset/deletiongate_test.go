package workerset_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/examples/workerset"
)

const drainLabel = "examples.ctrlkit.io/drain"

// gateFixture is a WorkerSet scaled from three ready Workers to two, with
// spec.lifecycle.preDelete, over a fake client and a fake clock.
type gateFixture struct {
	c        client.Client
	r        *childsetcr.Reconciler[*workerset.WorkerSet, *workerset.Worker]
	clock    *clocktesting.FakeClock
	recorder *record.FakeRecorder
}

func newGateFixture(t *testing.T, timeoutSeconds int32) *gateFixture {
	t.Helper()
	set := newSet(2)
	set.Spec.Lifecycle.PreDelete = workerset.PreDeleteHook{Label: drainLabel, TimeoutSeconds: timeoutSeconds}
	scheme := runtime.NewScheme()
	require.NoError(t, workerset.AddToScheme(scheme))
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&workerset.WorkerSet{}).
		WithObjects(set, worker("a", true, set), worker("b", true, set), worker("c", true, set)).
		WithIndex(&workerset.Worker{}, childsetcr.ControllerField, childsetcr.IndexByController).Build()
	f := &gateFixture{c: c, clock: clocktesting.NewFakeClock(time.Now().Truncate(time.Second)), recorder: record.NewFakeRecorder(10)}
	core, err := childsetcr.NewCore(c, nil, f.recorder, workerset.SetAdapter{}, workerset.WorkerAdapter{}, childset.WithClock(f.clock))
	require.NoError(t, err)
	f.r = childsetcr.NewReconciler(core)
	return f
}

func (f *gateFixture) sync(t *testing.T) reconcile.Result {
	t.Helper()
	res, err := f.r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "pool"}})
	require.NoError(t, err)
	return res
}

// marked names the Workers the gate holds.
func (f *gateFixture) marked(t *testing.T) []string {
	t.Helper()
	var out []string
	for name, w := range workers(t, f.c) {
		if w.Labels[drainLabel] == childset.DeletionGatePending {
			out = append(out, name)
		}
	}
	return out
}

// events is what the recorder holds, one event a line.
func (f *gateFixture) events() string {
	var out strings.Builder
	for len(f.recorder.Events) > 0 {
		out.WriteString(<-f.recorder.Events + "\n")
	}
	return out.String()
}

// spec.lifecycle.preDelete holds a scale-in: the victim is marked and kept
// until its label is cleared, then deleted.
func TestWorkerSetPreDeleteHoldsUntilReleased(t *testing.T) {
	f := newGateFixture(t, 600)
	for range 2 {
		res := f.sync(t)
		assert.InDelta(t, 10*time.Minute, res.RequeueAfter, float64(time.Second), "back when the gate times out")
		assert.Len(t, workers(t, f.c), 3, "nothing deleted while the gate holds")
		f.clock.Step(time.Second)
	}
	marked := f.marked(t)
	require.Len(t, marked, 1)

	w := workers(t, f.c)[marked[0]]
	delete(w.Labels, drainLabel)
	require.NoError(t, f.c.Update(context.Background(), &w))
	f.sync(t)
	left := workers(t, f.c)
	assert.Len(t, left, 2)
	assert.NotContains(t, left, marked[0], "the released Worker is the one deleted")
	assert.NotContains(t, f.events(), childset.ReasonDeletionGateTimeout)
}

// A gate not released within spec.lifecycle.preDelete.timeoutSeconds lets
// the deletion go, with a Warning event.
func TestWorkerSetPreDeleteTimesOut(t *testing.T) {
	f := newGateFixture(t, 30)
	res := f.sync(t)
	assert.Equal(t, 30*time.Second, res.RequeueAfter)
	require.Len(t, f.marked(t), 1)
	f.clock.Step(29 * time.Second)
	f.sync(t)
	assert.Len(t, workers(t, f.c), 3, "held until the timeout")
	f.clock.Step(time.Second)
	f.sync(t)
	assert.Len(t, workers(t, f.c), 2)
	assert.Empty(t, f.marked(t))
	assert.Contains(t, f.events(), "Warning "+childset.ReasonDeletionGateTimeout+" Deleting ")
}

// The gate's fields are spec.lifecycle.preDelete.{label,timeoutSeconds},
// absent when unset, and the CRD's schema keeps them (a field it lacked
// would be pruned by the API server).
func TestWorkerSetPreDeleteFields(t *testing.T) {
	set := newSet(1)
	raw, err := json.Marshal(set.Spec)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "lifecycle", "no gate, no field")
	set.Spec.Lifecycle.PreDelete = workerset.PreDeleteHook{Label: drainLabel, TimeoutSeconds: 5}
	raw, err = json.Marshal(set.Spec)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"lifecycle":{"preDelete":{"label":"examples.ctrlkit.io/drain","timeoutSeconds":5}}`)
	assert.Equal(t, set.Spec.Lifecycle, set.DeepCopy().Spec.Lifecycle)

	preDelete := crdSpecProperty(t, workerset.CRD, "WorkerSet", "lifecycle", "preDelete")
	props, _ := preDelete["properties"].(map[string]any)
	assert.Contains(t, props, "label")
	assert.Contains(t, props, "timeoutSeconds")
}

// crdSpecProperty is the schema of spec.<path> in the CRD of kind among
// the YAML documents of crd.
func crdSpecProperty(t *testing.T, crd []byte, kind string, path ...string) map[string]any {
	t.Helper()
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(crd), 4096)
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			t.Fatalf("no CRD of kind %s", kind)
		}
		require.NoError(t, err)
		spec, _ := doc["spec"].(map[string]any)
		names, _ := spec["names"].(map[string]any)
		if names["kind"] != kind {
			continue
		}
		versions, _ := spec["versions"].([]any)
		require.NotEmpty(t, versions)
		v, _ := versions[0].(map[string]any)
		schema, _ := v["schema"].(map[string]any)
		node, _ := schema["openAPIV3Schema"].(map[string]any)
		for _, p := range append([]string{"spec"}, path...) {
			props, _ := node["properties"].(map[string]any)
			node, _ = props[p].(map[string]any)
			require.NotNil(t, node, "spec.%v: no %s in the schema", path, p)
		}
		return node
	}
}
