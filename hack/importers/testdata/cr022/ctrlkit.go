package main

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
)

func reconciler() reconcile.Reconciler {
	return childsetcr.NewReconciler[*appsv1.StatefulSet, *corev1.ConfigMap](nil)
}
