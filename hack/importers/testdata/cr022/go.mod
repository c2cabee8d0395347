module example.com/cr022

go 1.26.0

require sigs.k8s.io/controller-runtime v0.22.4
