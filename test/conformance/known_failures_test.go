package conformance

// v1 is the id prefix of the records of Magnum's v1 controller tests.
const v1 = "magnum.tests.unit.api.controllers.v1."

// Reasons shared by several records.
const (
	reasonStateGuard409 = "deliberate deviation (pack §3.4): the cluster is CREATE_IN_PROGRESS; Magnum's cast is silent (202, test mocks the RPC), ours refuses with a synchronous 409"
	reasonUpgradeRPC    = "not replayable: the test mocks the cluster_upgrade RPC; Magnum's conductor refuses a CREATE_IN_PROGRESS cluster with the same 400 we answer"
	reasonCertMock      = "not replayable: the test replaces the whole conductor API with a mock returning fixed PEM/CSR values"
)

// knownFailures are the records of the published corpus that do not pass,
// each with a one-line reason (docs/compatibility.md names them). Every
// other record must pass; a listed record that passes is an error, so the
// list stays exact. FINDINGS.md has the diagnosis of each.
var knownFailures = map[string]string{
	// Certificates.
	v1 + "test_certificate.TestGetCaCertificate.test_get_one_by_name#1": reasonCertMock + " (its answer carries the mock's csr)",
	v1 + "test_certificate.TestPost.test_create_cert#1":                 reasonCertMock + " (\"fake-csr\" is not a CSR)",
	v1 + "test_certificate.TestPost.test_create_cert_by_cluster_name#1": reasonCertMock + " (\"fake-csr\" is not a CSR)",

	// Clusters: a zero-node create below 1.10.
	v1 + "test_cluster.TestPost.test_create_cluster_with_zero_node_count_fail#1": "deliberate deviation: a zero-node cluster is created at every microversion (magnum-tempest-plugin sends none); Magnum refuses it below 1.10",

	// Clusters: state guards of update and resize.
	v1 + "test_cluster.TestPatch.test_replace_health_status_ok#1":                    reasonStateGuard409,
	v1 + "test_cluster.TestPatch.test_update_cluster_with_rollback_disabled#1":       reasonStateGuard409,
	v1 + "test_cluster.TestPatch.test_update_cluster_with_rollback_enabled#1":        reasonStateGuard409,
	v1 + "test_cluster.TestPatch.test_update_cluster_with_zero_node_count#1":         reasonStateGuard409,
	v1 + "test_cluster_actions.TestClusterResize.test_resize_with_nodegroup#1":       reasonStateGuard409,
	v1 + "test_cluster_actions.TestClusterResize.test_resize_with_zero_node_count#1": reasonStateGuard409,

	// Cluster upgrade: the mocked RPC accepts what Magnum's conductor refuses.
	v1 + "test_cluster_actions.TestClusterUpgrade.test_upgrade#1":                  reasonUpgradeRPC,
	v1 + "test_cluster_actions.TestClusterUpgrade.test_upgrade_cluster_as_admin#1": reasonUpgradeRPC,
	v1 + "test_cluster_actions.TestClusterUpgrade.test_upgrade_default_master#1":   reasonUpgradeRPC,
	v1 + "test_cluster_actions.TestClusterUpgrade.test_upgrade_default_worker#1":   reasonUpgradeRPC,

	// Magnum services.
	v1 + "test_magnum_service.TestMagnumServiceController.test_get_many#1": "not replayable: the test mocks MagnumService.list with five services that are not in db_before",

	// Nodegroups.
	v1 + "test_nodegroup.TestDelete.test_delete_nodegroup_as_admin#1": "not replayable: the test's context is a MagicMock whose all_tenants is truthy; a real admin context scopes the cluster lookup to its project (404, as ours)",
}
