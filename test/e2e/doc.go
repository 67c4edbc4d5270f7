// Package e2e runs the openkeel-magnum binary as an operator or developer
// would: built from source, started as a subprocess on a free loopback port,
// and driven over HTTP and with the real python-openstackclient /
// python-magnumclient CLI (OPENKEEL_TEST_OPENSTACK_CLI).
package e2e
