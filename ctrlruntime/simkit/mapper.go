package simkit

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// builtinClusterScoped are client-go's cluster-scoped kinds, by group and
// kind; everything else is namespaced unless WithClusterScoped says not.
var builtinClusterScoped = []schema.GroupKind{
	{Kind: "Node"}, {Kind: "Namespace"}, {Kind: "PersistentVolume"}, {Kind: "ComponentStatus"},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"},
	{Group: "storage.k8s.io", Kind: "StorageClass"}, {Group: "storage.k8s.io", Kind: "CSIDriver"},
	{Group: "storage.k8s.io", Kind: "CSINode"}, {Group: "storage.k8s.io", Kind: "VolumeAttachment"},
	{Group: "storage.k8s.io", Kind: "VolumeAttributesClass"},
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"},
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"},
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"},
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"},
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"},
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"},
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicyBinding"},
	{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"},
	{Group: "certificates.k8s.io", Kind: "ClusterTrustBundle"},
	{Group: "node.k8s.io", Kind: "RuntimeClass"},
	{Group: "networking.k8s.io", Kind: "IngressClass"}, {Group: "networking.k8s.io", Kind: "IPAddress"},
	{Group: "networking.k8s.io", Kind: "ServiceCIDR"},
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"},
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"},
	{Group: "resource.k8s.io", Kind: "DeviceClass"}, {Group: "resource.k8s.io", Kind: "ResourceSlice"},
	{Group: "storagemigration.k8s.io", Kind: "StorageVersionMigration"},
	{Group: "internal.apiserver.k8s.io", Kind: "StorageVersion"},
}

// newStaticMapper maps every kind of s to the resource the simulated
// cluster and controller-runtime's fake client store it under
// (meta.UnsafeGuessKindToResource), so the cache, the client and the
// cluster agree without discovery. List kinds are not resources.
func newStaticMapper(s *runtime.Scheme, clusterScoped []schema.GroupKind) meta.RESTMapper {
	global := map[schema.GroupKind]bool{}
	for _, gk := range builtinClusterScoped {
		global[gk] = true
	}
	for _, gk := range clusterScoped {
		global[gk] = true
	}
	m := meta.NewDefaultRESTMapper(s.PrioritizedVersionsAllGroups())
	for gvk := range s.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal || strings.HasSuffix(gvk.Kind, "List") {
			continue
		}
		scope := meta.RESTScopeNamespace
		if global[gvk.GroupKind()] {
			scope = meta.RESTScopeRoot
		}
		m.Add(gvk, scope)
	}
	return m
}
