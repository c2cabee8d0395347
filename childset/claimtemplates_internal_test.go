package childset

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// A pod's claims are mounted as upstream's StatefulSet pods have them: a
// volume named after each template, first and in the templates' order, in
// place of a volume of the same name; the pod's other volumes are kept.
func TestMountPodClaims(t *testing.T) {
	templates := []v1.PersistentVolumeClaim{{}, {}}
	templates[0].Name, templates[1].Name = "data", "logs"
	spec := v1.PodSpec{Volumes: []v1.Volume{
		{Name: "config", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}},
		{Name: "logs", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
	}}
	mountPodClaims(&spec, templates, map[string]string{"data": "data-web-3", "logs": "logs-web-3"})
	var got []string
	for _, v := range spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			got = append(got, v.Name+"="+v.PersistentVolumeClaim.ClaimName)
		case v.ConfigMap != nil:
			got = append(got, v.Name+"=configmap")
		default:
			got = append(got, v.Name+"=other")
		}
	}
	if want := []string{"data=data-web-3", "logs=logs-web-3", "config=configmap"}; !slices.Equal(got, want) {
		t.Fatalf("volumes %v, want %v", got, want)
	}
}

// The core mounts a pod child's claims itself.
func TestPodChildGetsItsClaims(t *testing.T) {
	pod := &v1.Pod{}
	ct := ClaimTemplates{Templates: []v1.PersistentVolumeClaim{{}}}
	ct.Templates[0].Name = "data"
	(&Reconciler[*v1.ReplicationController, *v1.Pod]{}).mountClaims(&v1.ReplicationController{}, pod, ct, map[string]string{"data": "data-web-0"})
	if len(pod.Spec.Volumes) != 1 || pod.Spec.Volumes[0].PersistentVolumeClaim == nil || pod.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "data-web-0" {
		t.Fatalf("volumes %+v, want the claim data-web-0", pod.Spec.Volumes)
	}
}
