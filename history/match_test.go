package history

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const podTemplateHashLabel = "pod-template-hash"

// webTemplate is a Deployment's pod template as the API server returns it,
// defaults filled in.
func webTemplate() *v1.PodTemplateSpec {
	return &v1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: v1.PodSpec{
			Containers: []v1.Container{{
				Name:      "web",
				Image:     "nginx:1.25",
				Ports:     []v1.ContainerPort{{ContainerPort: 80, Protocol: v1.ProtocolTCP}},
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}},
				ReadinessProbe: &v1.Probe{
					ProbeHandler:   v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(80), Scheme: v1.URISchemeHTTP}},
					TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3,
				},
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: v1.TerminationMessageReadFile,
				ImagePullPolicy:          v1.PullIfNotPresent,
			}},
			RestartPolicy:                 v1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: ptr[int64](30),
			DNSPolicy:                     v1.DNSClusterFirst,
			SecurityContext:               &v1.PodSecurityContext{},
			SchedulerName:                 "default-scheduler",
			EnableServiceLinks:            ptr(true),
		},
	}
}

// undefaultedWebTemplate is webTemplate as a user writes it in a custom
// resource, which the API server does not default.
func undefaultedWebTemplate() *v1.PodTemplateSpec {
	return &v1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name:           "web",
			Image:          "nginx:1.25",
			Ports:          []v1.ContainerPort{{ContainerPort: 80}},
			Resources:      v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}},
			ReadinessProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Port: intstr.FromInt32(80)}}},
		}}},
	}
}

// Golden hashes of webTemplate made by Kubernetes v1.30's libraries, whose
// PodSpec lacks fields added since (so its dump, and hash, differ). Recipe,
// run outside this repository:
//
//	mkdir /tmp/golden && cd /tmp/golden && go mod init golden
//	go get k8s.io/api@v0.30.0 k8s.io/apimachinery@v0.30.0
//
// and a main package that builds webTemplate() with those modules and prints
// upstream v1.30's ComputeHash of it: fnv.New32a(), then
// fmt.Fprintf(h, "%v", k8s.io/apimachinery/pkg/util/dump.ForHash(*template))
// (v1.30's pkg/util/hash.DeepHashObject), then for a collision count the
// uint32 little-endian in eight bytes, then
// rand.SafeEncodeString(fmt.Sprint(h.Sum32())). It printed these values with
// go1.26 on 2026-11-25.
const (
	goldenV130WebHash           = "58bd9d49f9" // collisionCount nil
	goldenV130WebHashCollision1 = "7944db76d6" // collisionCount 1
)

func replicaSet(name string, created time.Time, template *v1.PodTemplateSpec, hash string) *appsv1.ReplicaSet {
	t := template.DeepCopy()
	t.Labels = CloneAndAddLabel(t.Labels, podTemplateHashLabel, hash)
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", CreationTimestamp: metav1.NewTime(created),
			Labels: map[string]string{"app": "web", podTemplateHashLabel: hash}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr[int32](3), Template: *t},
	}
}

// TestOlderMinorHashStillMatches is the library-upgrade case: a ReplicaSet
// created by a controller built on v1.30 carries v1.30's hash, which today's
// ComputeHash no longer produces. It must still be recognised as current, or
// the controller would roll every pod after an upgrade. Removing the
// semantic fallback from FindReplicaSet makes this test fail.
func TestOlderMinorHashStillMatches(t *testing.T) {
	require.NotEqual(t, goldenV130WebHash, ComputeHash(webTemplate(), nil),
		"today's libraries hash webTemplate like v1.30's; the golden no longer exercises drift, regenerate it from an older minor")
	require.NotEqual(t, goldenV130WebHashCollision1, ComputeHash(webTemplate(), ptr[int32](1)))

	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	old := replicaSet("web-"+goldenV130WebHash, t0, webTemplate(), goldenV130WebHash)
	unrelated := replicaSet("api-x", t0.Add(-time.Hour), func() *v1.PodTemplateSpec {
		t := webTemplate()
		t.Spec.Containers[0].Image = "nginx:1.24"
		return t
	}(), "x")
	sets := []*appsv1.ReplicaSet{unrelated, old}

	for name, tmpl := range map[string]*v1.PodTemplateSpec{
		"defaulted owner template (Deployment)":        webTemplate(),
		"undefaulted owner template (custom resource)": undefaultedWebTemplate(),
	} {
		t.Run(name, func(t *testing.T) {
			got, how := FindReplicaSet(sets, tmpl, podTemplateHashLabel, nil)
			assert.Same(t, old, got)
			assert.Equal(t, MatchedBySemantics, how)
		})
	}

	t.Run("collision count", func(t *testing.T) {
		bumped := replicaSet("web-"+goldenV130WebHashCollision1, t0, webTemplate(), goldenV130WebHashCollision1)
		got, how := FindReplicaSet([]*appsv1.ReplicaSet{unrelated, bumped}, webTemplate(), podTemplateHashLabel, ptr[int32](1))
		assert.Same(t, bumped, got)
		assert.Equal(t, MatchedBySemantics, how)
	})

	t.Run("a current hash wins over an older one", func(t *testing.T) {
		cur := ComputeHash(webTemplate(), nil)
		current := replicaSet("web-"+cur, t0.Add(time.Hour), webTemplate(), cur)
		got, how := FindReplicaSet([]*appsv1.ReplicaSet{old, current}, webTemplate(), podTemplateHashLabel, nil)
		assert.Same(t, current, got)
		assert.Equal(t, MatchedByHash, how)
	})
}

func TestFindReplicaSet(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cur := ComputeHash(webTemplate(), nil)

	t.Run("a hash collision never matches", func(t *testing.T) {
		other := webTemplate()
		other.Spec.Containers[0].Image = "nginx:1.26"
		colliding := replicaSet("web-"+cur, t0, other, cur)
		got, how := FindReplicaSet([]*appsv1.ReplicaSet{colliding, nil}, webTemplate(), podTemplateHashLabel, nil)
		assert.Nil(t, got)
		assert.Equal(t, NoMatch, how)
	})
	t.Run("the oldest equivalent wins", func(t *testing.T) {
		a := replicaSet("b", t0, webTemplate(), "old1")
		b := replicaSet("a", t0, webTemplate(), "old2")
		c := replicaSet("0", t0.Add(time.Second), webTemplate(), "old3")
		got, how := FindReplicaSet([]*appsv1.ReplicaSet{c, a, b}, webTemplate(), podTemplateHashLabel, nil)
		assert.Same(t, b, got, "same creation time: the name breaks the tie")
		assert.Equal(t, MatchedBySemantics, how)
	})
	t.Run("nil template", func(t *testing.T) {
		got, how := FindReplicaSet([]*appsv1.ReplicaSet{replicaSet("a", t0, webTemplate(), cur)}, nil, podTemplateHashLabel, nil)
		assert.Nil(t, got)
		assert.Equal(t, NoMatch, how)
	})
}

func TestTemplatesEquivalent(t *testing.T) {
	assert.True(t, TemplatesEquivalent(webTemplate(), undefaultedWebTemplate(), ""))
	assert.True(t, TemplatesEquivalent(nil, nil, ""))
	assert.False(t, TemplatesEquivalent(webTemplate(), nil, ""))

	a := webTemplate()
	before := a.DeepCopy()
	a.Labels[podTemplateHashLabel] = "abc"
	assert.False(t, TemplatesEquivalent(a, webTemplate(), ""), "the hash label counts unless ignored")
	assert.True(t, TemplatesEquivalent(a, webTemplate(), podTemplateHashLabel))
	assert.Equal(t, "abc", a.Labels[podTemplateHashLabel], "arguments are not modified")
	assert.NotEqual(t, before, a)

	changes := map[string]func(*v1.PodTemplateSpec){
		"image":              func(t *v1.PodTemplateSpec) { t.Spec.Containers[0].Image = "nginx:1.26" },
		"non-default grace":  func(t *v1.PodTemplateSpec) { t.Spec.TerminationGracePeriodSeconds = ptr[int64](5) },
		"pull policy Always": func(t *v1.PodTemplateSpec) { t.Spec.Containers[0].ImagePullPolicy = v1.PullAlways },
		"probe period":       func(t *v1.PodTemplateSpec) { t.Spec.Containers[0].ReadinessProbe.PeriodSeconds = 5 },
		"UDP port":           func(t *v1.PodTemplateSpec) { t.Spec.Containers[0].Ports[0].Protocol = v1.ProtocolUDP },
		"runAsUser":          func(t *v1.PodTemplateSpec) { t.Spec.SecurityContext = &v1.PodSecurityContext{RunAsUser: ptr[int64](1)} },
		"resources": func(t *v1.PodTemplateSpec) {
			t.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("200m")
		},
		"restart OnFailure": func(t *v1.PodTemplateSpec) { t.Spec.RestartPolicy = v1.RestartPolicyOnFailure },
	}
	for name, change := range changes {
		b := webTemplate()
		change(b)
		assert.False(t, TemplatesEquivalent(webTemplate(), b, ""), name)
		assert.False(t, TemplatesEquivalent(undefaultedWebTemplate(), b, ""), name)
	}
	// Quantities compare by value, not by spelling.
	b := webTemplate()
	b.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("0.1")
	assert.True(t, TemplatesEquivalent(webTemplate(), b, ""))
}

func TestClearDefaultsVolumesAndEnv(t *testing.T) {
	mode := ptr[int32](0o644)
	unset := ptr(v1.HostPathUnset)
	defaulted := &v1.PodTemplateSpec{Spec: v1.PodSpec{
		HostNetwork: true,
		Containers: []v1.Container{{
			Name: "c", Image: "busybox", ImagePullPolicy: v1.PullAlways,
			Ports:     []v1.ContainerPort{{ContainerPort: 8080, HostPort: 8080, Protocol: v1.ProtocolTCP}},
			Env:       []v1.EnvVar{{Name: "NODE", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "spec.nodeName"}}}},
			Lifecycle: &v1.Lifecycle{PreStop: &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/", Scheme: v1.URISchemeHTTP}}},
		}},
		Volumes: []v1.Volume{
			{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "s", DefaultMode: mode}}},
			{Name: "m", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{DefaultMode: mode}}},
			{Name: "h", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/x", Type: unset}}},
			{Name: "e", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		},
	}}
	plain := &v1.PodTemplateSpec{Spec: v1.PodSpec{
		HostNetwork: true,
		Containers: []v1.Container{{
			Name: "c", Image: "busybox",
			Ports:     []v1.ContainerPort{{ContainerPort: 8080}},
			Env:       []v1.EnvVar{{Name: "NODE", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
			Lifecycle: &v1.Lifecycle{PreStop: &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{}}},
		}},
		Volumes: []v1.Volume{
			{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "s"}}},
			{Name: "m", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}},
			{Name: "h", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/x"}}},
			{Name: "e"},
		},
	}}
	assert.True(t, TemplatesEquivalent(defaulted, plain, ""))
	plain.Spec.HostNetwork = false
	defaulted.Spec.HostNetwork = false
	assert.False(t, TemplatesEquivalent(defaulted, plain, ""), "without hostNetwork a hostPort is the user's")
}

func TestDefaultPullPolicy(t *testing.T) {
	for image, want := range map[string]v1.PullPolicy{
		"nginx":                        v1.PullAlways,
		"nginx:latest":                 v1.PullAlways,
		"nginx:1.25":                   v1.PullIfNotPresent,
		"registry:5000/nginx":          v1.PullAlways,
		"registry:5000/nginx:1.2":      v1.PullIfNotPresent,
		"nginx@sha256:abcd":            v1.PullIfNotPresent,
		"nginx:latest@sha256:abcd":     v1.PullAlways,
		"registry:5000/nginx@sha256:a": v1.PullIfNotPresent,
	} {
		assert.Equal(t, want, defaultPullPolicy(image), image)
	}
}

func TestFindRevision(t *testing.T) {
	parent := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", UID: "u1"}}
	kind := appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	data := func(image string) runtime.RawExtension {
		return runtime.RawExtension{Raw: []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"db","image":"` + image + `"}]}}}}`)}
	}
	decode := func(cr *appsv1.ControllerRevision) (*v1.PodTemplateSpec, error) {
		var s struct {
			Spec struct {
				Template v1.PodTemplateSpec `json:"template"`
			} `json:"spec"`
		}
		err := json.Unmarshal(cr.Data.Raw, &s)
		return &s.Spec.Template, err
	}
	needle, err := NewControllerRevision(parent, kind, nil, data("pg:16"), 3, nil)
	require.NoError(t, err)
	r1, _ := NewControllerRevision(parent, kind, nil, data("pg:15"), 1, nil)
	// An equivalent revision serialized with a defaulted field and an older
	// hash label: only the semantic comparison recognises it.
	r2 := needle.DeepCopy()
	r2.Revision = 2
	r2.Data = runtime.RawExtension{Raw: []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"db","image":"pg:16","terminationMessagePath":"/dev/termination-log"}],"restartPolicy":"Always"}}}}`)}
	r2.Labels[ControllerRevisionHashLabel] = "older"

	got, how, err := FindRevision([]*appsv1.ControllerRevision{r1, r2, nil}, needle, decode, "")
	require.NoError(t, err)
	assert.Same(t, r2, got)
	assert.Equal(t, MatchedBySemantics, how)

	got, how, err = FindRevision([]*appsv1.ControllerRevision{r1, r2}, needle, nil, "")
	require.NoError(t, err)
	assert.Nil(t, got, "without a decoder only equal data matches")
	assert.Equal(t, NoMatch, how)

	same := needle.DeepCopy()
	same.Revision = 1
	got, how, err = FindRevision([]*appsv1.ControllerRevision{r2, same, r1}, needle, decode, "")
	require.NoError(t, err)
	assert.Same(t, same, got)
	assert.Equal(t, MatchedByHash, how)

	_, _, err = FindRevision(nil, &appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: []byte("{")}}, decode, "")
	assert.Error(t, err, "an undecodable needle is an error")
	got, how, err = FindRevision([]*appsv1.ControllerRevision{r1}, nil, decode, "")
	assert.NoError(t, err)
	assert.Nil(t, got)
	assert.Equal(t, NoMatch, how)
}
