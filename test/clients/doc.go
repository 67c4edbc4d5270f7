// Package clients runs the real clients of Magnum, unmodified and installed
// from their registries, against the openkeel-magnum binary with a real
// Keystone in front:
//
//   - the `openstack coe` command matrix (python-openstackclient and
//     python-magnumclient, OPENKEEL_TEST_OPENSTACK_CLI);
//   - gophercloud's upstream acceptance tests for container-infra, run from
//     the module cache (OPENKEEL_TEST_GOPHERCLOUD), and our own tests built on
//     gophercloud's public containerinfra packages;
//   - magnum-tempest-plugin's API tests (OPENKEEL_TEST_TEMPEST) and
//     openstacksdk's functional tests (OPENKEEL_TEST_SDK_PYTHON);
//   - magnum-auto-healer's OpenStack provider, imported from
//     cloud-provider-openstack, and the cluster-autoscaler Magnum provider's
//     call sequence, both through gophercloud (OPENKEEL_TEST_GOPHERCLOUD).
//
// Every test needs OPENKEEL_TEST_KEYSTONE_URL (scripts/ci/keystone.sh). Each
// top-level test starts its own stack: a Glance/Nova/Neutron double, the
// service (`openkeel-magnum api` with [keystone_authtoken]) behind a
// recording proxy, the background status loop, and Keystone catalog entries
// in a region of its own (okm-clients) that point at them. When a client
// check fails, the HTTP exchanges the client had with the service are
// printed.
//
// Run everything (about 14 minutes, most of it the reconciler's 10 s poll):
//
//	eval "$(scripts/ci/keystone.sh)"
//	eval "$(scripts/ci/openstack-cli.sh)"
//	eval "$(scripts/ci/client-suites.sh)"
//	go test ./test/clients -v -count=1 -timeout 30m
//
// The tests of one process share the okm-clients region, so they run one
// after the other (no t.Parallel); two `go test ./test/clients` processes
// must not run at the same time against the same Keystone.
package clients
