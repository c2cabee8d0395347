package gang

import (
	_ "embed"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CRD is the Gang CustomResourceDefinition (crd.yaml), for installing it
// from code.
//
//go:embed crd.yaml
var CRD []byte

// The resource and kind of CRD.
var (
	Resource = schema.GroupVersionResource{Group: "examples.ctrlkit.io", Version: "v1alpha1", Resource: "gangs"}
	Kind     = Resource.GroupVersion().WithKind("Gang")
)

// Label selects a Gang's pods: the controller sets it to the Gang's name on
// every pod it creates, and adopts an orphan pod that carries it.
const Label = "examples.ctrlkit.io/gang"
