package podset

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func apierrorsNotFound(name string) error {
	return apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "replicasets"}, name)
}
