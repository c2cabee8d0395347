package parity

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/replicaset"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/status"
)

// leafCases is the number of cases of the status and slow-start targets: a
// few thousand by default, 100,000 under -long, CTRLKIT_PARITY_CASES when set.
func leafCases(t *testing.T) int {
	t.Helper()
	if v := os.Getenv("CTRLKIT_PARITY_CASES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("CTRLKIT_PARITY_CASES=%q: want a positive integer", v)
		}
		return n
	}
	if *longFlag {
		return 100_000
	}
	return 3_000
}

// runLeafTarget runs check on n generated cases and logs the figures; there
// is no skip predicate.
func runLeafTarget[C any](t *testing.T, name string, gen func(*rand.Rand) C, check func(C) string, describe func(C) string) {
	t.Helper()
	n, s := leafCases(t), seed(t)
	for i := range n {
		c := gen(caseRand(s, name, i))
		if msg := check(c); msg != "" {
			t.Fatalf("%s: mismatch at case %d (seed %d)\n%s\ninput:\n%s", name, i, s, msg, describe(c))
		}
	}
	t.Logf("%s: %d cases run, 0 differ, 0 skipped", name, n)
}

var templateKeys = []string{"app", "tier", "track"}

func randLabelSubset(r *rand.Rand) map[string]string {
	if r.IntN(8) == 0 {
		return nil
	}
	m := map[string]string{}
	for _, k := range templateKeys {
		if r.IntN(2) == 0 {
			m[k] = oneOf(r, "web", "db", "")
		}
	}
	return m
}

func randRSConditions(r *rand.Rand, at metav1.Time) []appsv1.ReplicaSetCondition {
	switch r.IntN(6) {
	case 0:
		return nil
	case 1:
		return []appsv1.ReplicaSetCondition{}
	}
	var out []appsv1.ReplicaSetCondition
	for range 1 + r.IntN(3) {
		out = append(out, appsv1.ReplicaSetCondition{
			Type:               oneOf(r, appsv1.ReplicaSetReplicaFailure, "Other"),
			Status:             oneOf(r, v1.ConditionTrue, v1.ConditionFalse),
			Reason:             oneOf(r, "", "FailedCreate", "FailedDelete", "X"),
			Message:            oneOf(r, "", "old"),
			LastTransitionTime: at,
		})
	}
	return out
}

func randRS(r *rand.Rand, now time.Time) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "default", Generation: int64(r.IntN(3)), ResourceVersion: "7"},
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        ptr.To(int32(r.IntN(7))),
			MinReadySeconds: int32(oneOf(r, 0, 0, 1, 5, 30)),
			Template:        v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: randLabelSubset(r)}},
		},
		Status: appsv1.ReplicaSetStatus{
			Replicas:             int32(r.IntN(4)),
			FullyLabeledReplicas: int32(r.IntN(4)),
			ReadyReplicas:        int32(r.IntN(4)),
			AvailableReplicas:    int32(r.IntN(4)),
			ObservedGeneration:   int64(r.IntN(3)),
			Conditions:           randRSConditions(r, metav1.NewTime(now.Add(-time.Hour))),
		},
	}
	if r.IntN(2) == 0 {
		rs.Status.TerminatingReplicas = ptr.To(int32(r.IntN(3)))
	}
	return rs
}

// calcCase is one calculateStatus input.
type calcCase struct {
	rs                  *appsv1.ReplicaSet
	active, terminating []*v1.Pod
	manageErr           error
	terminatingReplicas bool
	now                 time.Time
}

func genCalcCase(r *rand.Rand) calcCase {
	now := refNow
	g := newPodGen(r, now, r.IntN(2) == 0)
	c := calcCase{rs: randRS(r, now), now: now, terminatingReplicas: r.IntN(2) == 0}
	for range r.IntN(9) {
		p := g.pod()
		p.DeletionTimestamp = nil
		p.Labels = randLabelSubset(r)
		c.active = append(c.active, p)
	}
	for range r.IntN(3) {
		c.terminating = append(c.terminating, g.pod())
	}
	if r.IntN(2) == 0 {
		c.manageErr = errors.New(oneOf(r, "quota exceeded", "boom"))
	}
	return c
}

func describeCalc(c calcCase) string {
	var b strings.Builder
	fmt.Fprintf(&b, "rs spec.replicas=%d minReady=%d template=%v status=%+v\nmanageErr=%v terminatingReplicas=%v now=%v\n",
		*c.rs.Spec.Replicas, c.rs.Spec.MinReadySeconds, c.rs.Spec.Template.Labels, c.rs.Status, c.manageErr, c.terminatingReplicas, c.now)
	for _, p := range c.active {
		fmt.Fprintf(&b, "  active %s labels=%v\n", podString(p), p.Labels)
	}
	fmt.Fprintf(&b, "  terminating: %d\n", len(c.terminating))
	return b.String()
}

// newFailureTimes returns the transition times of ReplicaFailure conditions
// that calculateStatus added (none was in the input), and zeroes them in st:
// upstream stamps a new condition with the wall clock, ctrlkit with the now
// argument, a deliberate difference checked separately.
func newFailureTimes(in []appsv1.ReplicaSetCondition, st *appsv1.ReplicaSetStatus) []time.Time {
	for _, c := range in {
		if c.Type == appsv1.ReplicaSetReplicaFailure {
			return nil
		}
	}
	var out []time.Time
	for i := range st.Conditions {
		if st.Conditions[i].Type == appsv1.ReplicaSetReplicaFailure {
			out = append(out, st.Conditions[i].LastTransitionTime.Time)
			st.Conditions[i].LastTransitionTime = metav1.Time{}
		}
	}
	return out
}

func checkCalc(c calcCase) string {
	var opts []status.Option
	if c.terminatingReplicas {
		opts = append(opts, status.WithTerminatingReplicas())
	}
	before := time.Now()
	want := upstreamCalculateStatus(c.rs.DeepCopy(), c.active, c.terminating, c.manageErr,
		replicaset.ReplicaSetControllerFeatures{EnableStatusTerminatingReplicas: c.terminatingReplicas}, c.now)
	after := time.Now()
	got := status.CalculateReplicaSetStatus(c.rs.DeepCopy(), c.active, c.terminating, c.manageErr, c.now, opts...)

	wantTimes := newFailureTimes(c.rs.Status.Conditions, &want)
	gotTimes := newFailureTimes(c.rs.Status.Conditions, &got)
	if len(wantTimes) != len(gotTimes) {
		return fmt.Sprintf("new ReplicaFailure conditions: upstream %d, ctrlkit %d", len(wantTimes), len(gotTimes))
	}
	for i := range gotTimes {
		if !gotTimes[i].Equal(c.now) {
			return fmt.Sprintf("ctrlkit's new condition time %v, want the now argument %v", gotTimes[i], c.now)
		}
		// metav1.Time is serialised to the second, and upstream truncates
		// nothing, so its stamp lies within the call.
		if wantTimes[i].Before(before.Truncate(time.Second)) || wantTimes[i].After(after) {
			return fmt.Sprintf("upstream's new condition time %v outside the call [%v, %v]", wantTimes[i], before, after)
		}
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Sprintf("status differs:\nupstream %+v\nctrlkit  %+v", want, got)
	}
	return ""
}

func TestParityCalculateStatus(t *testing.T) {
	runLeafTarget(t, "CalculateStatus", genCalcCase, checkCalc, describeCalc)
}

// updateCase is one updateReplicaSetStatus input with the faults the
// apiserver injects.
type updateCase struct {
	rs          *appsv1.ReplicaSet
	newStatus   appsv1.ReplicaSetStatus
	failUpdates int    // the first failUpdates UpdateStatus calls fail
	updateErr   string // conflict | notfound | plain
	getErr      bool   // the GET after a failed update fails
	getBumps    bool   // the GET returns a newer object
}

func genUpdateCase(r *rand.Rand) updateCase {
	rs := randRS(r, refNow)
	c := updateCase{rs: rs, failUpdates: oneOf(r, 0, 0, 1, 1, 2, 3), updateErr: oneOf(r, "conflict", "notfound", "plain"),
		getErr: r.IntN(4) == 0, getBumps: r.IntN(2) == 0}
	c.newStatus = *rs.Status.DeepCopy()
	if r.IntN(3) == 0 {
		return c // steady state unless the generation was not observed
	}
	switch r.IntN(6) {
	case 0:
		c.newStatus.Replicas++
	case 1:
		c.newStatus.ReadyReplicas++
	case 2:
		c.newStatus.TerminatingReplicas = oneOf(r, nil, ptr.To(int32(0)), ptr.To(int32(4)))
	case 3:
		c.newStatus.Conditions = randRSConditions(r, metav1.NewTime(refNow))
	case 4:
		c.newStatus.AvailableReplicas += 2
	case 5:
		c.newStatus.FullyLabeledReplicas++
	}
	return c
}

// faultyClient returns a fake clientset holding rs whose reactors inject the
// case's faults and record every call; both sides get one built alike.
func faultyClient(c updateCase) (*fake.Clientset, *[]string) {
	// The simple clientset: field management, which NewClientset adds, is
	// irrelevant to a status update and would make 100,000 cases take ten
	// times as long.
	//lint:ignore SA1019 see above
	cs := fake.NewSimpleClientset(c.rs.DeepCopy())
	var calls []string
	updates := 0
	cs.PrependReactor("update", "replicasets", func(action clienttesting.Action) (bool, runtime.Object, error) {
		ua := action.(clienttesting.UpdateAction)
		sent := ua.GetObject().(*appsv1.ReplicaSet)
		calls = append(calls, fmt.Sprintf("update/%s rv=%s gen=%d status=%s", ua.GetSubresource(), sent.ResourceVersion, sent.Generation, statusString(sent.Status)))
		updates++
		if updates > c.failUpdates {
			return false, nil, nil
		}
		gr := schema.GroupResource{Group: "apps", Resource: "replicasets"}
		switch c.updateErr {
		case "conflict":
			return true, nil, apierrors.NewConflict(gr, sent.Name, errors.New("stale"))
		case "notfound":
			return true, nil, apierrors.NewNotFound(gr, sent.Name)
		}
		return true, nil, errors.New("plain failure")
	})
	cs.PrependReactor("get", "replicasets", func(action clienttesting.Action) (bool, runtime.Object, error) {
		calls = append(calls, "get "+action.(clienttesting.GetAction).GetName())
		if c.getErr {
			return true, nil, apierrors.NewServiceUnavailable("etcd is sad")
		}
		if c.getBumps {
			fresh := c.rs.DeepCopy()
			fresh.Generation += 5
			fresh.ResourceVersion = "99"
			fresh.Status.Replicas = 42
			return true, fresh, nil
		}
		return false, nil, nil
	})
	return cs, &calls
}

// statusString prints a status with terminatingReplicas dereferenced.
func statusString(st appsv1.ReplicaSetStatus) string {
	term := "nil"
	if st.TerminatingReplicas != nil {
		term = strconv.Itoa(int(*st.TerminatingReplicas))
	}
	st.TerminatingReplicas = nil
	return fmt.Sprintf("%+v terminating=%s", st, term)
}

func describeUpdate(c updateCase) string {
	return fmt.Sprintf("rs gen=%d status=%+v\nnewStatus=%+v\nfailUpdates=%d updateErr=%s getErr=%v getBumps=%v",
		c.rs.Generation, c.rs.Status, c.newStatus, c.failUpdates, c.updateErr, c.getErr, c.getBumps)
}

func checkUpdate(c updateCase) string {
	ucs, ucalls := faultyClient(c)
	urs := c.rs.DeepCopy()
	want, wantErr := upstreamUpdateReplicaSetStatus(klog.Background(), ucs.AppsV1().ReplicaSets("default"), urs, *c.newStatus.DeepCopy(),
		replicaset.ReplicaSetControllerFeatures{EnableStatusTerminatingReplicas: true})

	gcs, gcalls := faultyClient(c)
	grs := c.rs.DeepCopy()
	got, gotErr := status.UpdateReplicaSetStatus(context.Background(), gcs.AppsV1().ReplicaSets("default"), grs, *c.newStatus.DeepCopy())

	if !reflect.DeepEqual(*ucalls, *gcalls) {
		return fmt.Sprintf("API calls differ:\nupstream %q\nctrlkit  %q", *ucalls, *gcalls)
	}
	if (wantErr == nil) != (gotErr == nil) {
		return fmt.Sprintf("error: upstream %v, ctrlkit %v", wantErr, gotErr)
	}
	if wantErr != nil {
		// ctrlkit wraps upstream's error with context; the API error inside
		// must be the same, and classify the same.
		if !strings.Contains(gotErr.Error(), wantErr.Error()) || apierrors.ReasonForError(gotErr) != apierrors.ReasonForError(wantErr) {
			return fmt.Sprintf("error: upstream %q (%s), ctrlkit %q (%s)", wantErr, apierrors.ReasonForError(wantErr), gotErr, apierrors.ReasonForError(gotErr))
		}
	}
	if (want == nil) != (got == nil) {
		return fmt.Sprintf("result: upstream %v, ctrlkit %v", want != nil, got != nil)
	}
	if want != nil {
		if (want == urs) != (got == grs) {
			return fmt.Sprintf("steady state: upstream returned its input %v, ctrlkit %v", want == urs, got == grs)
		}
		if !reflect.DeepEqual(want.Status, got.Status) || want.Generation != got.Generation || want.ResourceVersion != got.ResourceVersion {
			return fmt.Sprintf("result differs:\nupstream gen=%d rv=%s %+v\nctrlkit  gen=%d rv=%s %+v",
				want.Generation, want.ResourceVersion, want.Status, got.Generation, got.ResourceVersion, got.Status)
		}
	}
	if !reflect.DeepEqual(grs, c.rs) {
		return "ctrlkit modified the ReplicaSet passed in"
	}
	return ""
}

func TestParityUpdateReplicaSetStatus(t *testing.T) {
	runLeafTarget(t, "UpdateReplicaSetStatus", genUpdateCase, checkUpdate, describeUpdate)
}
