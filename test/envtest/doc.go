// Package envtest holds the tests that need a real kube-apiserver and etcd
// (see internal/testutil/kubetest): they run when TEST_ASSET_KUBE_APISERVER
// and TEST_ASSET_ETCD are set, as printed by scripts/ci/kube-apiserver.sh.
package envtest
