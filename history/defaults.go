package history

import (
	"strings"

	v1 "k8s.io/api/core/v1"
)

// The API server fills in defaults when it stores a workload (the apps/v1
// defaulting of the embedded pod template) but not when the template lives in
// a custom resource, and a new Kubernetes minor may start defaulting a field
// an older one left empty. Two templates that differ only there describe the
// same pods. clearDefaults removes exactly these values, wherever they equal
// the default, so that a defaulted and an undefaulted copy compare equal:
//
// Pod spec:
//   - restartPolicy Always, dnsPolicy ClusterFirst, schedulerName
//     "default-scheduler", terminationGracePeriodSeconds 30,
//     enableServiceLinks true, an empty securityContext;
//   - with hostNetwork, a container port's hostPort equal to its
//     containerPort.
//
// Every container and init container:
//   - terminationMessagePath "/dev/termination-log", terminationMessagePolicy
//     File;
//   - imagePullPolicy Always for an image whose tag is "latest" or that has
//     neither tag nor digest, IfNotPresent otherwise;
//   - ports[].protocol TCP;
//   - env[].valueFrom.fieldRef.apiVersion "v1";
//   - liveness, readiness and startup probes: timeoutSeconds 1, periodSeconds
//     10, successThreshold 1, failureThreshold 3, httpGet path "/" and scheme
//     HTTP; the same httpGet defaults in postStart and preStop handlers.
//
// Volumes:
//   - defaultMode 0644 of secret, configMap, downwardAPI and projected
//     sources; downwardAPI items' fieldRef.apiVersion "v1";
//   - hostPath type "" (an empty pointer);
//   - an empty emptyDir, which the server sets on a volume with no source.
//
// Everything else, including resources, is compared as it is.
func clearDefaults(spec *v1.PodSpec) {
	if spec.RestartPolicy == v1.RestartPolicyAlways {
		spec.RestartPolicy = ""
	}
	if spec.DNSPolicy == v1.DNSClusterFirst {
		spec.DNSPolicy = ""
	}
	if spec.SchedulerName == v1.DefaultSchedulerName {
		spec.SchedulerName = ""
	}
	if p := spec.TerminationGracePeriodSeconds; p != nil && *p == v1.DefaultTerminationGracePeriodSeconds {
		spec.TerminationGracePeriodSeconds = nil
	}
	if p := spec.EnableServiceLinks; p != nil && *p == v1.DefaultEnableServiceLinks {
		spec.EnableServiceLinks = nil
	}
	if sc := spec.SecurityContext; sc != nil && isZeroPodSecurityContext(sc) {
		spec.SecurityContext = nil
	}
	for i := range spec.InitContainers {
		clearContainerDefaults(&spec.InitContainers[i], spec.HostNetwork)
	}
	for i := range spec.Containers {
		clearContainerDefaults(&spec.Containers[i], spec.HostNetwork)
	}
	for i := range spec.Volumes {
		clearVolumeDefaults(&spec.Volumes[i].VolumeSource)
	}
}

func isZeroPodSecurityContext(sc *v1.PodSecurityContext) bool {
	var zero v1.PodSecurityContext
	return semanticEqual(*sc, zero)
}

func clearContainerDefaults(c *v1.Container, hostNetwork bool) {
	if c.TerminationMessagePath == v1.TerminationMessagePathDefault {
		c.TerminationMessagePath = ""
	}
	if c.TerminationMessagePolicy == v1.TerminationMessageReadFile {
		c.TerminationMessagePolicy = ""
	}
	if c.ImagePullPolicy != "" && c.ImagePullPolicy == defaultPullPolicy(c.Image) {
		c.ImagePullPolicy = ""
	}
	for i := range c.Ports {
		p := &c.Ports[i]
		if p.Protocol == v1.ProtocolTCP {
			p.Protocol = ""
		}
		if hostNetwork && p.HostPort == p.ContainerPort {
			p.HostPort = 0
		}
	}
	for i := range c.Env {
		if vf := c.Env[i].ValueFrom; vf != nil && vf.FieldRef != nil && vf.FieldRef.APIVersion == "v1" {
			vf.FieldRef.APIVersion = ""
		}
	}
	for _, p := range []*v1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		if p != nil {
			clearProbeDefaults(p)
		}
	}
	if l := c.Lifecycle; l != nil {
		for _, h := range []*v1.LifecycleHandler{l.PostStart, l.PreStop} {
			if h != nil {
				clearHTTPGetDefaults(h.HTTPGet)
			}
		}
	}
}

func clearProbeDefaults(p *v1.Probe) {
	if p.TimeoutSeconds == 1 {
		p.TimeoutSeconds = 0
	}
	if p.PeriodSeconds == 10 {
		p.PeriodSeconds = 0
	}
	if p.SuccessThreshold == 1 {
		p.SuccessThreshold = 0
	}
	if p.FailureThreshold == 3 {
		p.FailureThreshold = 0
	}
	clearHTTPGetDefaults(p.HTTPGet)
}

func clearHTTPGetDefaults(g *v1.HTTPGetAction) {
	if g == nil {
		return
	}
	if g.Path == "/" {
		g.Path = ""
	}
	if g.Scheme == v1.URISchemeHTTP {
		g.Scheme = ""
	}
}

func clearVolumeDefaults(vs *v1.VolumeSource) {
	clearMode := func(m **int32) {
		if *m != nil && **m == v1.SecretVolumeSourceDefaultMode {
			*m = nil
		}
	}
	if s := vs.Secret; s != nil {
		clearMode(&s.DefaultMode)
	}
	if s := vs.ConfigMap; s != nil {
		clearMode(&s.DefaultMode)
	}
	if s := vs.DownwardAPI; s != nil {
		clearMode(&s.DefaultMode)
		for i := range s.Items {
			if f := s.Items[i].FieldRef; f != nil && f.APIVersion == "v1" {
				f.APIVersion = ""
			}
		}
	}
	if s := vs.Projected; s != nil {
		clearMode(&s.DefaultMode)
	}
	if s := vs.HostPath; s != nil && s.Type != nil && *s.Type == v1.HostPathUnset {
		s.Type = nil
	}
	if s := vs.EmptyDir; s != nil && semanticEqual(*s, v1.EmptyDirVolumeSource{}) {
		vs.EmptyDir = nil
	}
}

// defaultPullPolicy is the pull policy the API server gives image: Always
// for the "latest" tag or for an image with neither tag nor digest,
// IfNotPresent otherwise.
func defaultPullPolicy(image string) v1.PullPolicy {
	name, _, hasDigest := strings.Cut(image, "@")
	tag := ""
	if i := strings.LastIndexByte(name, ':'); i >= 0 && !strings.Contains(name[i+1:], "/") {
		tag = name[i+1:]
	}
	if tag == "latest" || (tag == "" && !hasDigest) {
		return v1.PullAlways
	}
	return v1.PullIfNotPresent
}
