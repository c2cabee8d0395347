package main

import (
	v1 "k8s.io/api/core/v1"

	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/podranking"
)

func useCtrlkit(pods []*v1.Pod) int {
	exp := expectations.NewControllerExpectations()
	_ = exp.ExpectCreations("ns/owner", 1)
	return len(podranking.PodsToDelete(pods, pods, 1))
}
