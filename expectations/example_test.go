package expectations_test

import (
	"fmt"
	"time"

	"github.com/ctrlkit/ctrlkit/expectations"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// A ReplicaSet-style controller: the sync expects creations under the
// owner's UID-bound key, and the pod handler lowers them through the pod's
// controllerRef.
func Example() {
	exp := expectations.NewControllerExpectations()
	rs := &metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "9f1c"}
	key := expectations.OwnerKeyFor(rs) // the workqueue still uses "default/web"

	// syncReplicaSet: two pods are missing, so create them.
	_ = exp.ExpectCreations(key, 2)
	fmt.Println("sync allowed:", exp.SatisfiedExpectations(key))

	// addPod handler, once per observed pod.
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-abcde"}}
	ref := &metav1.OwnerReference{Kind: "ReplicaSet", Name: "web", UID: "9f1c"}
	for range 2 {
		exp.CreationObserved(expectations.OwnerKeyForRef(pod.Namespace, ref))
	}
	fmt.Println("sync allowed:", exp.SatisfiedExpectations(key))
	// Output:
	// sync allowed: false
	// sync allowed: true
}

// An owner deleted and re-created under the same name gets a fresh key, so
// it never waits on its predecessor's record (kubernetes#142142).
func ExampleOwnerKey() {
	exp := expectations.NewControllerExpectations()
	oldKey := expectations.OwnerKey("default", "web", "uid-1")
	newKey := expectations.OwnerKey("default", "web", "uid-2")
	_ = exp.ExpectCreations(oldKey, 3)
	fmt.Println(oldKey, exp.SatisfiedExpectations(oldKey))
	fmt.Println(newKey, exp.SatisfiedExpectations(newKey))

	ns, name, uid, err := expectations.ParseOwnerKey(newKey)
	fmt.Println(ns, name, uid, err)
	// Output:
	// default/web@uid-1 false
	// default/web@uid-2 true
	// default web uid-2 <nil>
}

// Expecting creations by name: an unexpected or repeated name does not
// lower the count, and Pending says what is still missing.
func ExampleControllerExpectations_ExpectCreationsNamed() {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	exp := expectations.NewControllerExpectations(expectations.WithClock(clk))
	_ = exp.ExpectCreationsNamed("default/db", []string{"db-0", "db-1"})
	exp.CreationObservedNamed("default/db", "db-0")
	exp.CreationObservedNamed("default/db", "db-0")     // repeated
	exp.CreationObservedNamed("default/db", "intruder") // unexpected
	clk.Step(90 * time.Second)

	r, _ := exp.Pending("default/db")
	fmt.Println(r.Adds, r.PendingNames, r.Age)
	// Output:
	// 1 [db-1] 1m30s
}

// Deletions tracked by dependent key count once each, although graceful
// deletion reports a pod twice.
func ExampleUIDTrackingControllerExpectations() {
	exp := expectations.NewUIDTrackingControllerExpectations(expectations.NewControllerExpectations())
	_ = exp.ExpectDeletions("default/web", []string{"default/web-1", "default/web-2"})
	exp.DeletionObserved("default/web", "default/web-1") // deletionTimestamp set
	exp.DeletionObserved("default/web", "default/web-1") // final delete
	fmt.Println(exp.SatisfiedExpectations("default/web"), exp.PendingDeletions("default/web"))
	exp.DeletionObserved("default/web", "default/web-2")
	fmt.Println(exp.SatisfiedExpectations("default/web"))
	// Output:
	// false [default/web-2]
	// true
}
