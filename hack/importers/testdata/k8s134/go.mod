module example.com/k8s134

go 1.26.0

require (
	k8s.io/api v0.34.4
	k8s.io/apimachinery v0.34.4
	k8s.io/client-go v0.34.4
)
