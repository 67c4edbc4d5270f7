// Package kubetest starts a real Kubernetes API server for tests: etcd and
// kube-apiserver, run by controller-runtime's envtest, with the Cluster API
// and Cluster API Provider OpenStack CRDs installed. No controller runs; a
// test plays the controllers' part by writing status itself.
//
// The binaries come from the environment (TEST_ASSET_KUBE_APISERVER and
// TEST_ASSET_ETCD, printed by scripts/ci/kube-apiserver.sh, or
// KUBEBUILDER_ASSETS). When they are not set, Start skips the test, or fails
// it when CI=true. The CRDs are read from
// ${OKM_CRDS_DIR:-<repository>/../shared/crds}.
//
// Each environment costs a few seconds to start, so a test package should
// share one (New in TestMain, or Start once) rather than start one per test,
// and give each test its own namespace.
package kubetest
