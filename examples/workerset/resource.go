package workerset

import (
	_ "embed"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CRD holds the WorkerSet and Worker CustomResourceDefinitions (crd.yaml,
// two YAML documents), for installing them from code.
//
//go:embed crd.yaml
var CRD []byte

// The resources and kinds of CRD.
var (
	SetResource    = schema.GroupVersionResource{Group: "examples.ctrlkit.io", Version: "v1alpha1", Resource: "workersets"}
	WorkerResource = schema.GroupVersionResource{Group: "examples.ctrlkit.io", Version: "v1alpha1", Resource: "workers"}
	SetKind        = SetResource.GroupVersion().WithKind("WorkerSet")
	WorkerKind     = WorkerResource.GroupVersion().WithKind("Worker")
)
