//! The records of the published corpus that do not pass in any replay, in-process
//! or through the binary, each with a one-line reason (docs/compatibility.md names
//! them; FINDINGS.md has the diagnosis).

/// The id prefix of the records of Magnum's v1 controller tests.
macro_rules! v1 {
    ($rest:literal) => {
        concat!("magnum.tests.unit.api.controllers.v1.", $rest)
    };
}

const STATE_GUARD_409: &str = "deliberate deviation (pack §3.4): the cluster is CREATE_IN_PROGRESS; Magnum's cast is silent (202, test mocks the RPC), ours refuses with a synchronous 409";
const UPGRADE_RPC: &str = "not replayable: the test mocks the cluster_upgrade RPC; Magnum's conductor refuses a CREATE_IN_PROGRESS cluster with the same 400 we answer";
const CERT_MOCK_GET: &str = "not replayable: the test replaces the whole conductor API with a mock returning fixed PEM/CSR values (its answer carries the mock's csr, which Magnum's own GET does not return)";
const CERT_MOCK_POST: &str = "not replayable: the test replaces the whole conductor API with a mock returning fixed PEM/CSR values (\"fake-csr\" is not a CSR)";

/// The known failures: every other record must pass, and a listed record
/// that passes is an error, so the list stays exact.
pub const KNOWN: &[(&str, &str)] = &[
    // Certificates.
    (
        v1!("test_certificate.TestGetCaCertificate.test_get_one_by_name#1"),
        CERT_MOCK_GET,
    ),
    (
        v1!("test_certificate.TestPost.test_create_cert#1"),
        CERT_MOCK_POST,
    ),
    (
        v1!("test_certificate.TestPost.test_create_cert_by_cluster_name#1"),
        CERT_MOCK_POST,
    ),
    // Clusters: a zero-node create below 1.10.
    (
        v1!("test_cluster.TestPost.test_create_cluster_with_zero_node_count_fail#1"),
        "deliberate deviation: a zero-node cluster is created at every microversion (magnum-tempest-plugin sends none); Magnum refuses it below 1.10",
    ),
    // Clusters: state guards of update and resize.
    (
        v1!("test_cluster.TestPatch.test_replace_health_status_ok#1"),
        STATE_GUARD_409,
    ),
    (
        v1!("test_cluster.TestPatch.test_update_cluster_with_rollback_disabled#1"),
        STATE_GUARD_409,
    ),
    (
        v1!("test_cluster.TestPatch.test_update_cluster_with_rollback_enabled#1"),
        STATE_GUARD_409,
    ),
    (
        v1!("test_cluster.TestPatch.test_update_cluster_with_zero_node_count#1"),
        STATE_GUARD_409,
    ),
    (
        v1!("test_cluster_actions.TestClusterResize.test_resize_with_nodegroup#1"),
        STATE_GUARD_409,
    ),
    (
        v1!("test_cluster_actions.TestClusterResize.test_resize_with_zero_node_count#1"),
        STATE_GUARD_409,
    ),
    // Cluster upgrade: the mocked RPC accepts what Magnum's conductor refuses.
    (
        v1!("test_cluster_actions.TestClusterUpgrade.test_upgrade#1"),
        UPGRADE_RPC,
    ),
    (
        v1!("test_cluster_actions.TestClusterUpgrade.test_upgrade_cluster_as_admin#1"),
        UPGRADE_RPC,
    ),
    (
        v1!("test_cluster_actions.TestClusterUpgrade.test_upgrade_default_master#1"),
        UPGRADE_RPC,
    ),
    (
        v1!("test_cluster_actions.TestClusterUpgrade.test_upgrade_default_worker#1"),
        UPGRADE_RPC,
    ),
    // Magnum services.
    (
        v1!("test_magnum_service.TestMagnumServiceController.test_get_many#1"),
        "not replayable: the test mocks MagnumService.list with five services that are not in db_before",
    ),
    // Nodegroups.
    (
        v1!("test_nodegroup.TestDelete.test_delete_nodegroup_as_admin#1"),
        "not replayable: the test's context is a MagicMock whose all_tenants is truthy; a real admin context scopes the cluster lookup to its project (404, as ours)",
    ),
];

/// The reason `id` is a known failure.
pub fn known(id: &str) -> Option<&'static str> {
    KNOWN.iter().find(|(k, _)| *k == id).map(|(_, r)| *r)
}
