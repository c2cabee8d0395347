package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/process"
	"github.com/ctrlkit/ctrlkit/shard"
	"github.com/ctrlkit/ctrlkit/simcluster"
)

// decodeManifests decodes every document of a deploy/ file with client-go's
// scheme, failing on anything it does not know.
func decodeManifests(t *testing.T, name string) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", name))
	require.NoError(t, err)
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []runtime.Object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		require.NoError(t, err, "decoding a document of %s", name)
		objs = append(objs, obj)
	}
	return objs
}

// permission is one (group, resource[/subresource], verb) triple, with the
// object's name when a rule restricts it by resourceNames.
type permission string

func perm(group, resource, verb string) permission {
	return permission(group + "|" + resource + "|" + verb)
}

func namedPerm(group, resource, verb, name string) permission {
	return permission(group + "|" + resource + "|" + verb + "|" + name)
}

func rulePermissions(rules []rbacv1.PolicyRule) map[permission]bool {
	out := map[permission]bool{}
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					if len(r.ResourceNames) == 0 {
						out[perm(g, res, v)] = true
						continue
					}
					for _, name := range r.ResourceNames {
						out[namedPerm(g, res, v, name)] = true
					}
				}
			}
		}
	}
	return out
}

// namedLeaseVerbs are the lease verbs rbac-base.yaml restricts by name, to
// the leader-election Lease; a ring member's own Lease has no fixed name.
var namedLeaseVerbs = map[string]bool{"get": true, "update": true}

const leaderLeaseName = "ctrlkit-replicaset-controller"

// actionPermissions is the permission each recorded call needs. Creating a
// pod whose controllerRef blocks owner deletion also needs update on the
// owner's finalizers under OwnerReferencesPermissionEnforcement, which the
// fake clientset does not enforce, so it is derived from the pod.
func actionPermissions(actions []k8stesting.Action) map[permission]bool {
	used := map[permission]bool{}
	for _, a := range actions {
		gr := a.GetResource()
		res := gr.Resource
		if sub := a.GetSubresource(); sub != "" {
			res += "/" + sub
		}
		if res == "leases" && namedLeaseVerbs[a.GetVerb()] && actionName(a) == leaderLeaseName {
			used[namedPerm(gr.Group, res, a.GetVerb(), actionName(a))] = true
			continue
		}
		used[perm(gr.Group, res, a.GetVerb())] = true
		if create, ok := a.(k8stesting.CreateAction); ok && res == "pods" {
			if pod, ok := create.GetObject().(*v1.Pod); ok {
				for _, ref := range pod.OwnerReferences {
					if ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion {
						gv, _ := schema.ParseGroupVersion(ref.APIVersion)
						used[perm(gv.Group, strings.ToLower(ref.Kind)+"s/finalizers", "update")] = true
					}
				}
			}
		}
	}
	return used
}

// actionName is the name of the object a get or update addresses.
func actionName(a k8stesting.Action) string {
	switch x := a.(type) {
	case k8stesting.GetAction:
		return x.GetName()
	case k8stesting.UpdateAction:
		if m, ok := x.GetObject().(metav1.Object); ok {
			return m.GetName()
		}
	}
	return ""
}

func sortedKeys(m map[permission]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, string(k))
	}
	slices.Sort(out)
	return out
}

func TestDeploymentManifest(t *testing.T) {
	objs := decodeManifests(t, "deployment.yaml")
	require.Len(t, objs, 1)
	d, ok := objs[0].(*appsv1.Deployment)
	require.True(t, ok, "deployment.yaml holds a %T", objs[0])
	rbac := decodeManifests(t, "rbac-base.yaml")
	var sa *v1.ServiceAccount
	for _, o := range rbac {
		if s, ok := o.(*v1.ServiceAccount); ok {
			sa = s
		}
	}
	require.NotNil(t, sa, "rbac-base.yaml has a ServiceAccount")
	assert.Equal(t, sa.Name, d.Spec.Template.Spec.ServiceAccountName)
	assert.Equal(t, sa.Namespace, d.Namespace)
	require.Len(t, d.Spec.Template.Spec.Containers, 1)
	c := d.Spec.Template.Spec.Containers[0]
	// Every argument must be a flag the binary accepts.
	var o options
	fs := newFlagSet(&o, io.Discard)
	require.NoError(t, fs.Parse(c.Args))
	require.NoError(t, o.validate())
	assert.True(t, o.lease.Enabled, "a multi-replica Deployment must elect a leader")
	// The Lease Role's name-restricted rule must name the Deployment's lease.
	var leaseNames []string
	for _, obj := range rbac {
		if r, ok := obj.(*rbacv1.Role); ok {
			for _, rule := range r.Rules {
				leaseNames = append(leaseNames, rule.ResourceNames...)
			}
		}
	}
	assert.Equal(t, []string{o.lease.Name}, leaseNames)
	// The probes' port is the health address's, and /metrics is on neither
	// it nor any other interface than loopback.
	_, healthPort, err := net.SplitHostPort(o.healthAddr)
	require.NoError(t, err)
	metricsHost, metricsPort, err := net.SplitHostPort(o.metricsAddr)
	require.NoError(t, err)
	assert.NotEqual(t, healthPort, metricsPort)
	ip := net.ParseIP(metricsHost)
	assert.True(t, ip != nil && ip.IsLoopback(), "the Deployment serves /metrics on %q, not loopback", o.metricsAddr)
	require.Len(t, c.Ports, 1)
	assert.Equal(t, healthPort, strconv.Itoa(int(c.Ports[0].ContainerPort)), "the one container port is the health port")
	require.NotNil(t, c.LivenessProbe)
	require.NotNil(t, c.ReadinessProbe)
	assert.Equal(t, "/healthz", c.LivenessProbe.HTTPGet.Path)
	assert.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path)
}

// TestRBACMatchesWhatTheControllerUses runs the controller of each kind
// through every code path that calls the API (creation, a repeated creation
// failure, adoption, release, scale-down, a conflicting status update) under
// leader election, and checks that the verbs it used are exactly those
// rbac-base.yaml and the kind's own files grant, cluster-wide and namespaced
// alike: nothing missing, nothing extra, and nothing for the other kind.
func TestRBACMatchesWhatTheControllerUses(t *testing.T) {
	base := grantedBy(t, "rbac-base.yaml")
	require.NotEmpty(t, base)
	for _, kind := range []replicaset.Kind{replicaset.ReplicaSets, replicaset.ReplicationControllers} {
		used := exerciseController(t, kind)
		for _, file := range []string{"rbac-" + string(kind) + ".yaml", "rbac-" + string(kind) + "-namespaced.yaml"} {
			granted := grantedBy(t, file)
			for p := range base {
				granted[p] = true
			}
			assert.Equal(t, sortedKeys(used), sortedKeys(granted), "rbac-base.yaml and %s must grant exactly the verbs the %s controller uses", file, kind)
		}
	}
}

// grantedBy is every permission the Roles and ClusterRoles of file grant.
func grantedBy(t *testing.T, file string) map[permission]bool {
	t.Helper()
	granted := map[permission]bool{}
	for _, o := range decodeManifests(t, file) {
		var rules []rbacv1.PolicyRule
		switch r := o.(type) {
		case *rbacv1.ClusterRole:
			rules = r.Rules
		case *rbacv1.Role:
			rules = r.Rules
		}
		for p := range rulePermissions(rules) {
			granted[p] = true
		}
	}
	return granted
}

// TestNamespacedRBACGrantsNothingOutsideItsNamespace: a namespaced variant
// holds a Role and a RoleBinding to it and nothing else, neither names a
// namespace (so both land in the one it is applied to), and the Role covers
// no cluster-scoped resource: whatever it grants, it grants in that
// namespace alone. The binding's subject is the base file's ServiceAccount.
func TestNamespacedRBACGrantsNothingOutsideItsNamespace(t *testing.T) {
	var sa *v1.ServiceAccount
	for _, o := range decodeManifests(t, "rbac-base.yaml") {
		if s, ok := o.(*v1.ServiceAccount); ok {
			sa = s
		}
	}
	require.NotNil(t, sa)
	// Resources the namespaced Roles may name; all of them are namespaced.
	namespaced := map[string]bool{"pods": true, "events": true, "replicasets": true, "replicasets/status": true,
		"replicasets/finalizers": true, "replicationcontrollers": true, "replicationcontrollers/status": true,
		"replicationcontrollers/finalizers": true}
	for _, kind := range []replicaset.Kind{replicaset.ReplicaSets, replicaset.ReplicationControllers} {
		file := "rbac-" + string(kind) + "-namespaced.yaml"
		objs := decodeManifests(t, file)
		require.Len(t, objs, 2, file)
		role, ok := objs[0].(*rbacv1.Role)
		require.True(t, ok, "%s: first object is a %T, not a Role", file, objs[0])
		binding, ok := objs[1].(*rbacv1.RoleBinding)
		require.True(t, ok, "%s: second object is a %T, not a RoleBinding", file, objs[1])
		assert.Empty(t, role.Namespace, "%s: the Role names a namespace", file)
		assert.Empty(t, binding.Namespace, "%s: the RoleBinding names a namespace", file)
		assert.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}, binding.RoleRef, file)
		assert.Equal(t, []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: sa.Namespace}}, binding.Subjects, file)
		for _, r := range role.Rules {
			assert.Empty(t, r.NonResourceURLs, file)
			for _, res := range r.Resources {
				assert.True(t, namespaced[res], "%s: the Role names %q, which is not a namespaced resource of the controller", file, res)
			}
		}
	}
}

// exerciseController returns the permissions one kind's controller used.
// The test sets the scene through the object tracker, which records no
// actions, so only the controller's own calls are counted.
func exerciseController(t *testing.T, kind replicaset.Kind) map[permission]bool {
	t.Helper()
	return exerciseControllerWith(t, kind, func(*options) {})
}

// exerciseControllerWith is exerciseController with the options changed by
// adjust first.
func exerciseControllerWith(t *testing.T, kind replicaset.Kind, adjust func(*options)) map[permission]bool {
	t.Helper()
	cluster := simcluster.New(simcluster.WithStartupDelay(0))
	cs := cluster.Client()
	tracker := cs.Tracker()
	ns := "default"
	labels := map[string]string{"app": "rbac"}

	var failures atomic.Int32
	cs.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		// Two identical failures make the recorder patch the repeated event.
		if failures.Add(1) <= 2 {
			return true, nil, apierrors.NewServiceUnavailable("simulated outage")
		}
		return false, nil, nil
	})
	var conflicts atomic.Int32
	cs.PrependReactor("update", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		// One conflicting status write makes the status update re-read.
		if a.GetSubresource() == "status" && conflicts.Add(1) == 1 {
			return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: a.GetResource().Resource}, "x", errors.New("stale"))
		}
		return false, nil, nil
	})

	tmpl := v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "i"}}}}
	replicas := int32(3)
	var ownerKind string
	if kind == replicaset.ReplicationControllers {
		ownerKind = "ReplicationController"
		require.NoError(t, tracker.Add(&v1.ReplicationController{
			ObjectMeta: metav1.ObjectMeta{Name: "o", Namespace: ns, UID: "owner-uid", ResourceVersion: "1"},
			Spec:       v1.ReplicationControllerSpec{Replicas: &replicas, Selector: labels, Template: &tmpl},
		}))
	} else {
		ownerKind = "ReplicaSet"
		require.NoError(t, tracker.Add(&appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: "o", Namespace: ns, UID: "owner-uid", ResourceVersion: "1"},
			Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: tmpl},
		}))
	}
	// An orphan to adopt, and an owned pod whose labels no longer match, to
	// release.
	require.NoError(t, tracker.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: ns, UID: "p1",
		Labels: labels, ResourceVersion: "1"}}))
	isController := true
	require.NoError(t, tracker.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "stray", Namespace: ns, UID: "p2",
		Labels: map[string]string{"app": "other"}, ResourceVersion: "1",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: ownerKind, Name: "o", UID: "owner-uid", Controller: &isController}}}}))

	o := options{kind: kind, workers: 2, burst: 500, drainTimeout: time.Second,
		lease: process.LeaderElection{Enabled: true, Namespace: "ctrlkit-system", Name: "ctrlkit-replicaset-controller",
			LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 100 * time.Millisecond}}
	adjust(&o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, nil, o, process.OneClient(cs), nil, true) }()

	podsOwned := func() (owned int) {
		list, err := tracker.List(v1.SchemeGroupVersion.WithResource("pods"), v1.SchemeGroupVersion.WithKind("Pod"), ns)
		require.NoError(t, err)
		for _, p := range list.(*v1.PodList).Items {
			if ref := metav1.GetControllerOf(&p); ref != nil && ref.Kind == ownerKind && p.Labels["app"] == "rbac" {
				owned++
			}
		}
		return owned
	}
	require.Eventually(t, func() bool { return podsOwned() == 3 }, 20*time.Second, 20*time.Millisecond, "scale up to 3 with adoption")

	// Scale down to 1 through the tracker (unrecorded). A write straight
	// to the tracker keeps the object's resourceVersion, so a status write
	// of the controller racing it passes the version check and puts the old
	// spec back, as no apiserver would: write it again until it holds.
	require.Eventually(t, func() bool {
		gvr, obj := ownerResource(t, kind, cs, ns)
		if replicasOf(obj) != 1 {
			setReplicas(obj, 1)
			require.NoError(t, tracker.Update(gvr, obj, ns))
		}
		return podsOwned() == 1
	}, 20*time.Second, 20*time.Millisecond, "scale down to 1")
	// Events are written asynchronously; wait for the repeated one's patch.
	require.Eventually(t, func() bool { return hasAction(cs, "patch", "events") }, 20*time.Second, 20*time.Millisecond)

	cancel()
	require.NoError(t, <-done)

	return actionPermissions(cs.Actions())
}

func hasAction(cs interface{ Actions() []k8stesting.Action }, verb, resource string) bool {
	for _, a := range cs.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == resource {
			return true
		}
	}
	return false
}

func ownerResource(t *testing.T, kind replicaset.Kind, cs interface {
	Tracker() k8stesting.ObjectTracker
}, ns string) (schema.GroupVersionResource, runtime.Object) {
	t.Helper()
	gvr := appsv1.SchemeGroupVersion.WithResource("replicasets")
	if kind == replicaset.ReplicationControllers {
		gvr = v1.SchemeGroupVersion.WithResource("replicationcontrollers")
	}
	obj, err := cs.Tracker().Get(gvr, ns, "o")
	require.NoError(t, err)
	return gvr, obj
}

func replicasOf(obj runtime.Object) int32 {
	switch o := obj.(type) {
	case *appsv1.ReplicaSet:
		return *o.Spec.Replicas
	case *v1.ReplicationController:
		return *o.Spec.Replicas
	default:
		panic(fmt.Sprintf("unexpected %T", obj))
	}
}

func setReplicas(obj runtime.Object, n int32) {
	switch o := obj.(type) {
	case *appsv1.ReplicaSet:
		o.Spec.Replicas = &n
	case *v1.ReplicationController:
		o.Spec.Replicas = &n
	default:
		panic(fmt.Sprintf("unexpected %T", obj))
	}
}

// TestPreflightChecksEveryPermissionTheControllerUses: whatever the
// controller of a kind calls, preflight asks about first, so that a Role
// missing any of it fails at start-up rather than at the first call.
func TestPreflightChecksEveryPermissionTheControllerUses(t *testing.T) {
	for _, kind := range []replicaset.Kind{replicaset.ReplicaSets, replicaset.ReplicationControllers} {
		o := options{kind: kind, lease: process.LeaderElection{Enabled: true, Namespace: "ctrlkit-system", Name: "ctrlkit-replicaset-controller"}}
		checked := map[permission]bool{}
		for _, r := range o.access() {
			res := r.Resource
			if r.Subresource != "" {
				res += "/" + r.Subresource
			}
			if r.Name != "" {
				checked[namedPerm(r.Group, res, r.Verb, r.Name)] = true
				continue
			}
			checked[perm(r.Group, res, r.Verb)] = true
		}
		for p := range exerciseController(t, kind) {
			assert.True(t, checked[p], "%s: the controller uses %s, which preflight does not check", kind, p)
		}
	}
}

// TestShardRBACMatchesWhatARingMemberUses: a replica run with --shard-ring
// instead of --leader-elect uses exactly what the kind's file and
// rbac-shard.yaml grant, and preflight checks all of it.
func TestShardRBACMatchesWhatARingMemberUses(t *testing.T) {
	shardFile := grantedBy(t, "rbac-shard.yaml")
	require.NotEmpty(t, shardFile)
	for _, by := range []string{shard.ByUID, shard.ByNamespace} {
		kind := replicaset.ReplicaSets
		var opts options
		used := exerciseControllerWith(t, kind, func(o *options) {
			o.lease = process.LeaderElection{}
			o.shard = shard.Flags{Ring: "rbac", By: by, Namespace: "ctrlkit-system", Identity: "replica-0",
				LeaseDuration: 3 * time.Second, RenewInterval: 200 * time.Millisecond, SafetyMargin: time.Second, SweepInterval: time.Second}
			require.NoError(t, o.shard.Validate())
			opts = *o
		})
		granted := grantedBy(t, "rbac-"+string(kind)+".yaml")
		for p := range shardFile {
			granted[p] = true
		}
		assert.Equal(t, sortedKeys(granted), sortedKeys(used), "--shard-by=%s: rbac-%s.yaml and rbac-shard.yaml must grant exactly the verbs a ring member uses", by, kind)

		checked := map[permission]bool{}
		for _, r := range opts.access() {
			res := r.Resource
			if r.Subresource != "" {
				res += "/" + r.Subresource
			}
			checked[perm(r.Group, res, r.Verb)] = true
		}
		for p := range used {
			assert.True(t, checked[p], "the ring member uses %s, which preflight does not check", p)
		}
	}
}
