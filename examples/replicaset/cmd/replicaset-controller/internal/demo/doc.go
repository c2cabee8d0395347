// Package demo is the scripted demo replicaset-controller plays on its
// simulated cluster: create an owner of 10, scale it to 100, delete 10 pods
// by hand, give a few pods a low deletion cost, then scale down to 5 while
// printing which pods go and why. It only drives the API and reports; the
// controller under demonstration is started by the command itself, with the
// same wiring as against a real cluster.
package demo
