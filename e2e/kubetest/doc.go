// Package kubetest starts a real etcd and a real kube-apiserver on loopback for
// tests, and hands back a *rest.Config that talks to them.
//
// # Why this exists
//
// controller-runtime's envtest does the same job, but it runs prebuilt binaries
// that its setup tool downloads from GitHub release assets (formerly a GCS
// bucket). Where only the Go module proxy is reachable, as in ctrlkit's CI, those
// binaries cannot be had. kubetest instead builds both servers from Go modules
// with the local toolchain:
//
//   - kube-apiserver from k8s.io/kubernetes/cmd/kube-apiserver,
//   - etcd from go.etcd.io/etcd/server/v3,
//
// each built once with `go build` into a cache directory keyed by the module
// versions, the Go version and the platform. The first (cold) build costs a few
// minutes on two cores; every later start only execs the cached binaries and
// takes a few seconds.
//
// # Why child processes rather than an in-process apiserver
//
// An apiserver started inside the test process (k8s.io/kubernetes's
// cmd/kube-apiserver/app/testing with etcd3/testserver) does not stop all of
// its goroutines on teardown. Measured with v1.36.3: 90 s after TearDownFn and
// the embedded etcd's cleanup, goleak still finds an etcd gRPC client channel
// that nothing closes (three grpc CallbackSerializer goroutines plus an addrConn
// loop redialling the stopped etcd for ever) and the healthz logger's
// wait.Forever goroutine. A suite could only ignore those by name, and so would
// miss a real leak of the same shape in the code under test. Child processes
// are killed and reaped by Stop, which therefore leaves no process, no
// listening port and no goroutine behind. It also keeps the test binary small:
// only client-go is linked into it.
//
// # Using it from another module
//
// The module that runs the tests must be able to build both commands, so its
// go.mod needs them as tools (Go 1.24+), which also keeps `go mod tidy` from
// dropping them:
//
//	tool (
//		go.etcd.io/etcd/server/v3
//		k8s.io/kubernetes/cmd/kube-apiserver
//	)
//
// together with the usual replace lines that pin k8s.io/kubernetes's staging
// modules. Alternatively point KUBETEST_KUBE_APISERVER and KUBETEST_ETCD (or
// envtest's TEST_ASSET_KUBE_APISERVER and TEST_ASSET_ETCD) at existing binaries,
// and nothing is built. KUBETEST_CACHE_DIR overrides the cache directory.
//
// # What the control plane is
//
// Only etcd and kube-apiserver run: there is no scheduler, kubelet or
// kube-controller-manager, so nothing schedules or runs pods, no built-in
// controller competes with the one under test, and there is no garbage
// collector or quota controller. Tests write pod status themselves. The
// ServiceAccount admission plugin is disabled so pods need no service-account
// token; the client authenticates with a static token as a member of
// system:masters.
//
// etcd serves TLS on its client and peer ports and requires a client
// certificate (--client-cert-auth) signed by the run's own CA, so other local
// users cannot read or rewrite the cluster's state while it runs. The
// apiserver presents that certificate (--etcd-certfile), and so do
// CompactEtcd and the start-up health check; Env.EtcdTLSConfig hands it to a
// test that needs etcd itself. The CA's key exists only in memory.
//
// # Authorization, identities and manifests
//
// WithRBAC runs the apiserver as a production cluster authorizes: RBAC, with
// the OwnerReferencesPermissionEnforcement admission plugin, so that setting
// blockOwnerDeletion needs "update" on the owner's finalizers. Env.Config
// stays an admin identity for the test's own setup. The code under test gets
// a restricted one from ImpersonationConfig (a service account's user and
// groups, impersonated by the admin) or from ServiceAccountToken /
// ServiceAccountKubeconfig (a real token from the TokenRequest API, and a
// kubeconfig file for a child process). ApplyManifest and ApplyManifestFile
// create every object of a multi-document YAML manifest, such as a
// controller's shipped RBAC, and InstallCRDs / InstallCRDsFromYAML install
// CustomResourceDefinitions and wait until they are served.
//
// # Faults
//
// StopAPIServer, StartAPIServer and RestartAPIServer take kube-apiserver down
// and bring it back on the same port over the same etcd, so existing clients
// reconnect by themselves. CompactEtcd discards etcd's history, so that a
// watch or list resumed from an older resourceVersion fails with "too old
// resource version" (410 Gone) and a reflector must relist; with
// --watch-cache=false (WithAPIServerFlags) watches read etcd directly and a
// watch cut after the compaction always hits it.
//
// # Cache directory
//
// Built binaries are kept in $KUBETEST_CACHE_DIR, else ctrlkit-kubetest
// under the user's cache directory. Without one (no $HOME) they go to a
// per-user directory in the temp dir, which must be a real directory owned by
// the current user with mode 0700: binaries in a directory another user could
// write would be executed by the tests.
//
// Start is meant to be called once per test binary (from TestMain) and the
// control plane shared between tests that each work in their own namespace;
// StartT is the convenience form for a single test.
package kubetest
