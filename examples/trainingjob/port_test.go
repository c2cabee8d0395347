package trainingjob

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/expectations"
)

// The sync resets each replica type's record (SetExpectations(key, 0, 0),
// training-operator's ResetExpectations) before it creates pods; every test
// that expects createNewPod to wait does the same.

func TestCreateNewPodWaitsForAddPod(t *testing.T) {
	jc, fake, queue := newController(t)
	job := newJob("uid-1")
	key := workerPods.KeyFor(job)
	require.Equal(t, "ml/mnist#worker-pods@uid-1", key)
	require.NoError(t, jc.Expectations.SetExpectations(key, 0, 0))

	require.NoError(t, jc.createNewPod(context.Background(), job, job, "Worker", podTemplate("mnist-worker-0", "worker")))

	add, ok := adds(t, jc, key)
	require.True(t, ok)
	assert.Equal(t, int64(1), add, "createNewPod raises the worker record by one")
	assert.False(t, jc.Expectations.SatisfiedExpectations(key), "unsatisfied until the pod is observed")
	require.Len(t, fake.Templates, 1)
	assert.Equal(t, "mnist-worker-0", fake.Templates[0].Name, "the pod is created by the template's name")
	assert.Empty(t, fake.Templates[0].GenerateName)
	assert.Equal(t, "ml", fake.CreateNamespaces[0])
	assert.Equal(t, metav1.OwnerReference{
		APIVersion: "kubeflow.org/v1", Kind: "PyTorchJob", Name: "mnist", UID: "uid-1",
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}, fake.ControllerRefs[0])
	assert.Zero(t, queue.Len(), "nothing is enqueued before the pod is observed")

	jc.AddPod(createdPod(t, fake, 0))

	assert.True(t, jc.Expectations.SatisfiedExpectations(key), "AddPod observed the creation")
	assert.Equal(t, []string{"ml/mnist"}, drain(queue), "AddPod enqueues the job's namespace/name")
}

// RaiseExpectations, as upstream, does nothing for a key without a record:
// a sync that skips the reset never waits for its creations.
func TestCreateNewPodWithoutResetDoesNotWait(t *testing.T) {
	jc, fake, _ := newController(t)
	job := newJob("uid-1")

	require.NoError(t, jc.createNewPod(context.Background(), job, job, "Worker", podTemplate("mnist-worker-0", "worker")))

	_, ok := adds(t, jc, workerPods.KeyFor(job))
	assert.False(t, ok, "no record without the sync's reset")
	assert.True(t, jc.Expectations.SatisfiedExpectations(workerPods.KeyFor(job)))
	creates, _, _ := fake.Counts()
	assert.Equal(t, 1, creates)
}

func TestCreateNewPodErrorLowersExpectation(t *testing.T) {
	for name, createErr := range map[string]error{
		"plain error":    errors.New("quota exceeded"),
		"forbidden":      apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "mnist-worker-0", errors.New("no")),
		"server timeout": apierrors.NewServerTimeout(schema.GroupResource{Resource: "pods"}, "create", 1),
	} {
		t.Run(name, func(t *testing.T) {
			jc, fake, queue := newController(t)
			fake.CreateErr = createErr
			job := newJob("uid-1")
			key := workerPods.KeyFor(job)
			require.NoError(t, jc.Expectations.SetExpectations(key, 0, 0))

			err := jc.createNewPod(context.Background(), job, job, "Worker", podTemplate("mnist-worker-0", "worker"))

			require.ErrorIs(t, err, createErr, "the create error is returned")
			add, ok := adds(t, jc, key)
			require.True(t, ok)
			assert.Equal(t, int64(0), add, "the raise is undone")
			assert.True(t, jc.Expectations.SatisfiedExpectations(key))
			assert.Zero(t, queue.Len())
		})
	}
}

func TestCreateNewPodTimeoutLeavesExpectationPending(t *testing.T) {
	const ttl = 5 * time.Minute
	clk := testingclock.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	jc, fake, _ := newController(t, expectations.WithClock(clk), expectations.WithTTL(ttl), expectations.WithLogger(logr.Discard()))
	fake.CreateErr = apierrors.NewTimeoutError("create took too long", 1)
	job := newJob("uid-1")
	key := workerPods.KeyFor(job)
	require.NoError(t, jc.Expectations.SetExpectations(key, 0, 0))

	require.NoError(t, jc.createNewPod(context.Background(), job, job, "Worker", podTemplate("mnist-worker-0", "worker")),
		"a timeout is not an error: the pod may still appear")

	add, ok := adds(t, jc, key)
	require.True(t, ok)
	assert.Equal(t, int64(1), add)
	assert.False(t, jc.Expectations.SatisfiedExpectations(key), "pending: the informer may still observe the pod")

	clk.SetTime(clk.Now().Add(ttl - time.Second))
	assert.False(t, jc.Expectations.SatisfiedExpectations(key), "still pending before the TTL")
	clk.SetTime(clk.Now().Add(2 * time.Second))
	assert.True(t, jc.Expectations.SatisfiedExpectations(key), "the record expires when the pod never appears")
}

func TestRecordsArePerReplicaType(t *testing.T) {
	jc, fake, queue := newController(t)
	job := newJob("uid-1")
	workerKey, psKey := workerPods.KeyFor(job), psPods.KeyFor(job)
	require.NoError(t, jc.Expectations.SetExpectations(workerKey, 0, 0))
	require.NoError(t, jc.Expectations.SetExpectations(psKey, 0, 0))
	ctx := context.Background()

	require.NoError(t, jc.createNewPod(ctx, job, job, "Worker", podTemplate("mnist-worker-0", "worker")))
	require.NoError(t, jc.createNewPod(ctx, job, job, "PS", podTemplate("mnist-ps-0", "ps")))
	require.False(t, jc.Expectations.SatisfiedExpectations(workerKey))
	require.False(t, jc.Expectations.SatisfiedExpectations(psKey))

	jc.AddPod(createdPod(t, fake, 0))
	assert.True(t, jc.Expectations.SatisfiedExpectations(workerKey), "the worker pod satisfies the worker record")
	assert.False(t, jc.Expectations.SatisfiedExpectations(psKey), "and not the ps record")

	jc.AddPod(createdPod(t, fake, 1))
	assert.True(t, jc.Expectations.SatisfiedExpectations(psKey))
	assert.Equal(t, []string{"ml/mnist"}, drain(queue), "one job key, deduplicated by the queue")
}

func TestRecreatedJobHasItsOwnRecord(t *testing.T) {
	jc, fake, _ := newController(t)
	ctx := context.Background()
	oldJob := newJob("uid-1")
	oldKey := workerPods.KeyFor(oldJob)
	require.NoError(t, jc.Expectations.SetExpectations(oldKey, 0, 0))
	require.NoError(t, jc.createNewPod(ctx, oldJob, oldJob, "Worker", podTemplate("mnist-worker-0", "worker")))
	require.False(t, jc.Expectations.SatisfiedExpectations(oldKey))

	// The job is deleted and re-created under the same name before the old
	// pod is observed.
	newJob := newJob("uid-2")
	newKey := workerPods.KeyFor(newJob)
	require.NotEqual(t, oldKey, newKey)
	assert.True(t, jc.Expectations.SatisfiedExpectations(newKey), "the new job starts satisfied")

	require.NoError(t, jc.Expectations.SetExpectations(newKey, 0, 0))
	require.NoError(t, jc.createNewPod(ctx, newJob, newJob, "Worker", podTemplate("mnist-worker-0", "worker")))

	jc.AddPod(createdPod(t, fake, 0)) // the old job's pod
	assert.False(t, jc.Expectations.SatisfiedExpectations(newKey), "the old incarnation's pod does not satisfy the new record")
	assert.True(t, jc.Expectations.SatisfiedExpectations(oldKey), "it lowers its own job's record")

	jc.AddPod(createdPod(t, fake, 1))
	assert.True(t, jc.Expectations.SatisfiedExpectations(newKey))
}

func TestInvalidReplicaTypeRefused(t *testing.T) {
	for _, replicaType := range []string{"Worker/x", "Worker@x", "Worker#x"} {
		t.Run(replicaType, func(t *testing.T) {
			jc, fake, queue := newController(t)
			job := newJob("uid-1")

			err := jc.createNewPod(context.Background(), job, job, replicaType, podTemplate("mnist-worker-0", "worker"))

			require.ErrorIs(t, err, expectations.ErrInvalidOwnerKey)
			assert.Zero(t, fake.CreateCallCount, "no pod is created")
			assert.Zero(t, jc.Expectations.Len(), "no record is touched")

			// A pod carrying such a label is ignored, not enqueued.
			pod := createdPodFor(job, strings.ToLower(replicaType))
			jc.AddPod(pod)
			assert.Zero(t, queue.Len())
			assert.Zero(t, jc.Expectations.Len())
		})
	}
}

// createdPodFor is a live pod of job with the given replica-type label.
func createdPodFor(job metav1.Object, replicaType string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace:       job.GetNamespace(),
		Name:            job.GetName() + "-" + replicaType + "-0",
		Labels:          map[string]string{replicaTypeLabel: replicaType},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, jobGVK)},
	}}
}

func TestAddPodIgnores(t *testing.T) {
	job := newJob("uid-1")
	now := metav1.Now()
	for name, mutate := range map[string]func(*v1.Pod){
		"no controller reference": func(p *v1.Pod) { p.OwnerReferences = nil },
		"owner that is not the controller": func(p *v1.Pod) {
			p.OwnerReferences[0].Controller = ptr.To(false)
		},
		"controller of another kind": func(p *v1.Pod) {
			// Same name and UID, so a missed kind check would hit the record.
			p.OwnerReferences[0].Kind = "TFJob"
		},
		"no replica-type label": func(p *v1.Pod) { p.Labels = map[string]string{"app": "mnist"} },
		"being deleted":         func(p *v1.Pod) { p.DeletionTimestamp = &now },
	} {
		t.Run(name, func(t *testing.T) {
			jc, _, queue := newController(t)
			key := workerPods.KeyFor(job)
			require.NoError(t, jc.Expectations.SetExpectations(key, 1, 0))
			pod := createdPodFor(job, "worker")
			mutate(pod)

			jc.AddPod(pod)

			add, ok := adds(t, jc, key)
			require.True(t, ok)
			assert.Equal(t, int64(1), add, "the record is untouched")
			assert.Zero(t, queue.Len(), "nothing is enqueued")
		})
	}

	t.Run("not a pod", func(t *testing.T) {
		jc, _, queue := newController(t)
		key := workerPods.KeyFor(job)
		require.NoError(t, jc.Expectations.SetExpectations(key, 1, 0))
		jc.AddPod(&v1.Service{})
		jc.AddPod(nil)
		add, _ := adds(t, jc, key)
		assert.Equal(t, int64(1), add)
		assert.Zero(t, queue.Len())
	})

	t.Run("control: the unmutated pod is observed", func(t *testing.T) {
		jc, _, queue := newController(t)
		key := workerPods.KeyFor(job)
		require.NoError(t, jc.Expectations.SetExpectations(key, 1, 0))
		jc.AddPod(createdPodFor(job, "worker"))
		assert.True(t, jc.Expectations.SatisfiedExpectations(key))
		assert.Equal(t, []string{"ml/mnist"}, drain(queue))
	})
}

// TestMigratingBlockMatchesPort keeps MIGRATING.md's worked port identical
// to port.go, so the guide shows code that compiles and passes these tests.
func TestMigratingBlockMatchesPort(t *testing.T) {
	guide, err := os.ReadFile("../../MIGRATING.md")
	require.NoError(t, err)
	src, err := os.ReadFile("port.go")
	require.NoError(t, err)

	_, section, found := strings.Cut(string(guide), "\n## Worked port: a training-operator pod creation\n")
	require.True(t, found, "MIGRATING.md has no worked-port section")
	_, block, found := strings.Cut(section, "```go\nimport (")
	require.True(t, found, "the worked-port section has no Go block starting with its imports")
	block, _, found = strings.Cut("import ("+block, "```")
	require.True(t, found, "the Go block is not closed")

	code, found := strings.CutPrefix(string(src), "package trainingjob\n\n")
	require.True(t, found, "port.go must start with its package clause and a blank line")
	assert.Equal(t, code, block, "MIGRATING.md's worked port differs from port.go; copy port.go (without the package clause) into the guide")
}
