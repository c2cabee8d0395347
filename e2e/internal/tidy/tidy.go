package tidy

import (
	_ "github.com/ctrlkit/ctrlkit/claim"
	_ "k8s.io/apiserver/pkg/storage/etcd3/testserver"
	_ "k8s.io/apiserver/pkg/storage/storagebackend"
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	_ "k8s.io/kubernetes/pkg/controller"
	_ "k8s.io/kubernetes/pkg/controller/replicaset"
	_ "k8s.io/kubernetes/pkg/api/v1/pod"
	_ "k8s.io/kubernetes/pkg/apis/core/helper"
)
