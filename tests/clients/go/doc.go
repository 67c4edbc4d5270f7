// Package clients holds the Go clients of the client suites
// (tests/clients): our own checks built on gophercloud's public
// containerinfra packages, magnum-auto-healer's OpenStack provider imported
// from cloud-provider-openstack, and the cluster-autoscaler Magnum provider's
// call sequence through gophercloud.
//
// It imports nothing of the service. The stack it talks to is started by the
// Rust harness of tests/clients (cargo test -p openkeel-magnum --test
// clients), which runs each test of this package against a fresh stack and
// describes it in OKM_CLIENTS_STACK (JSON: the Keystone region of its
// catalog, the URLs of the recording proxy in front of the service, of the
// OpenStack double and of the control API, and the names seeded into the
// double). The Keystone users and passwords come from the environment of
// scripts/ci/keystone.sh, as for every suite.
//
// A test skips when OKM_CLIENTS_STACK or OPENKEEL_TEST_GOPHERCLOUD is unset,
// except with CI=true, where it fails.
package clients
