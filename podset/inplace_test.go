package podset

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func inPlacePod(image, cpu string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name: "app", Image: image,
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}},
		}}},
	}
}

func TestInPlaceUpdateOfPods(t *testing.T) {
	from := inPlacePod("web:1", "100m")
	for name, tc := range map[string]struct {
		to      func(*v1.Pod)
		ok      bool
		patches []string // subresource and body of each
	}{
		"image": {to: func(p *v1.Pod) { p.Spec.Containers[0].Image = "web:2" }, ok: true,
			patches: []string{` {"spec":{"containers":[{"image":"web:2","name":"app"}]}}`}},
		"cpu through resize": {to: func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("200m") }, ok: true,
			patches: []string{`resize {"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"200m"}}}]}}`}},
		"a label, and one removed": {to: func(p *v1.Pod) { p.Labels = map[string]string{"tier": "front"} }, ok: true,
			patches: []string{` {"metadata":{"labels":{"app":null,"tier":"front"}}}`}},
		"nothing":         {to: func(*v1.Pod) {}, ok: true},
		"an env variable": {to: func(p *v1.Pod) { p.Spec.Containers[0].Env = []v1.EnvVar{{Name: "A", Value: "1"}} }},
		"a container more": {to: func(p *v1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "side", Image: "side:1"})
		}},
		"ephemeral storage": {to: func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests[v1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
		}},
		"the QoS class": {to: func(p *v1.Pod) { p.Spec.Containers[0].Resources = v1.ResourceRequirements{} }},
	} {
		t.Run(name, func(t *testing.T) {
			to := from.DeepCopy()
			tc.to(to)
			patches, ok := InPlace{}.InPlaceUpdate(from, to)
			require.Equal(t, tc.ok, ok)
			var got []string
			for _, p := range patches {
				assert.Equal(t, types.StrategicMergePatchType, p.Type)
				got = append(got, p.Subresource+" "+string(p.Data))
			}
			assert.Equal(t, tc.patches, got)
		})
	}
}

func TestInPlaceDoneOfPods(t *testing.T) {
	running := func(image string, ready bool) *v1.Pod {
		p := inPlacePod("web:2", "100m")
		p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "app", Image: image, Ready: ready,
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}
		return p
	}
	assert.True(t, InPlace{}.InPlaceDone(running("docker.io/library/web:2", true)), "the kubelet's spelling of the image")
	assert.False(t, InPlace{}.InPlaceDone(running("web:1", true)), "the old image still runs")
	assert.False(t, InPlace{}.InPlaceDone(running("web:2", false)), "not ready")
	pending := running("web:2", true)
	pending.Status.Conditions = []v1.PodCondition{{Type: v1.PodResizePending, Status: v1.ConditionTrue}}
	assert.False(t, InPlace{}.InPlaceDone(pending), "a resize pending")
	assert.True(t, InPlace{}.InPlaceDone(inPlacePod("web:2", "100m")), "no container status yet: its Ready condition says")
	assert.Equal(t, "web:latest", normalImage("web"))
	assert.Equal(t, "registry:5000/web:latest", normalImage("registry:5000/web"))
	assert.Equal(t, "web@sha256:abc", normalImage("docker.io/library/web@sha256:abc"))
}
