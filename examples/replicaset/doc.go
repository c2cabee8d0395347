// Package replicaset is a reference ReplicaSet controller built only from
// ctrlkit's packages and client-go. It shows how the primitives compose, and
// it is what ctrlkit's end-to-end tests run against a real kube-apiserver.
package replicaset
