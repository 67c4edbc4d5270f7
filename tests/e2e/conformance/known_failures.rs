//! The records that fail through the binary only: the known failures of
//! every replay are `openkeel_magnum_exchanges::known`.

/// The id prefix of the records of Magnum's v1 controller tests.
macro_rules! v1 {
    ($rest:literal) => {
        concat!("magnum.tests.unit.api.controllers.v1.", $rest)
    };
}

/// The id prefix of the records of Magnum's API controller tests.
macro_rules! api {
    ($rest:literal) => {
        concat!("magnum.tests.unit.api.controllers.", $rest)
    };
}

const PASTE: &str = "not replayable black-box: the recording serves another paste file; the binary's public routes are those of Magnum's default api-paste.ini (/ and /v1), [api] api_paste_config being accepted and not read";
const MOCK_RAISES: &str = "not replayable black-box: the mocked validator raises an exception with a message of its own (\"test-img\", \"aaa\"…) that no Glance, Nova or Neutron content makes a real lookup produce";
const TEMPLATE_DRIVER: &str = "not replayable black-box: the test mocks Driver.get_driver, so the template keeps driver null; a binary resolves and stores the driver it has for the cluster type (the built-in fake one)";
const DRIVER_NAMES: &str = "not replayable black-box: the mocked driver lookup answers for a driver name the test made up (conf_driver, user_driver, mock_driver); a binary has only its real drivers";
const KEYSTONE_MOCK: &str = "not replayable black-box: the answer comes from a mocked Keystone client (the project lookup fails) reached before any policy refusal; through the binary the member caller is refused by quota:create first";

/// Records the reference implementation passes in its in-process replay
/// but that no black-box replay can reproduce: what the test mocked has no
/// counterpart in configuration, Keystone or the OpenStack services.
pub const BLACK_BOX: &[(&str, &str)] = &[
    (
        api!("test_root.TestRootController.test_auth_with_no_public_routes#1"),
        PASTE,
    ),
    (
        api!("test_root.TestRootController.test_auth_with_no_public_routes#2"),
        PASTE,
    ),
    (
        api!("test_root.TestRootController.test_auth_with_root_access#2"),
        PASTE,
    ),
    (
        api!("test_root.TestRootController.test_auth_with_v1_access#1"),
        PASTE,
    ),
    (
        v1!("test_cluster.TestPost.test_create_cluster_with_invalid_flavor#1"),
        MOCK_RAISES,
    ),
    (
        v1!("test_cluster.TestPost.test_create_cluster_with_multi_images_same_name#1"),
        MOCK_RAISES,
    ),
    (
        v1!("test_cluster.TestPost.test_create_cluster_with_no_os_distro_image#1"),
        MOCK_RAISES,
    ),
    (
        v1!("test_cluster.TestPost.test_create_cluster_with_nonexist_image#1"),
        MOCK_RAISES,
    ),
    (
        v1!(
            "test_cluster_template.TestPatch.test_create_cluster_template_with_no_os_distro_image#1"
        ),
        MOCK_RAISES,
    ),
    (
        v1!(
            "test_cluster_template.TestPatch.test_replace_cluster_template_with_no_exist_flavor_id#1"
        ),
        MOCK_RAISES,
    ),
    (
        v1!(
            "test_cluster_template.TestPatch.test_replace_cluster_template_with_no_exist_image_id#1"
        ),
        MOCK_RAISES,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template#1"),
        TEMPLATE_DRIVER,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template_doesnt_contain_id#1"),
        TEMPLATE_DRIVER,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template_driver_from_config#1"),
        DRIVER_NAMES,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template_driver_from_user#1"),
        DRIVER_NAMES,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template_hidden_success#1"),
        TEMPLATE_DRIVER,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template_public_not_set#1"),
        TEMPLATE_DRIVER,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template_public_success#1"),
        TEMPLATE_DRIVER,
    ),
    (
        v1!(
            "test_cluster_template.TestPost.test_create_cluster_template_with_docker_volume_size#1"
        ),
        TEMPLATE_DRIVER,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template_with_driver_name#1"),
        DRIVER_NAMES,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template_with_external_network#1"),
        TEMPLATE_DRIVER,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template_with_flavor#1"),
        TEMPLATE_DRIVER,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template_with_image_name#1"),
        TEMPLATE_DRIVER,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template_with_labels#1"),
        TEMPLATE_DRIVER,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template_with_multi_dns#1"),
        TEMPLATE_DRIVER,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template_with_multi_image_name#1"),
        MOCK_RAISES,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template_with_network_driver#1"),
        TEMPLATE_DRIVER,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template_with_no_exist_flavor#1"),
        MOCK_RAISES,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template_with_no_exist_keypair#1"),
        MOCK_RAISES,
    ),
    (
        v1!(
            "test_cluster_template.TestPost.test_create_cluster_template_with_no_os_distro_image#1"
        ),
        MOCK_RAISES,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template_with_no_volume_driver#1"),
        TEMPLATE_DRIVER,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template_with_os_distro_image#1"),
        TEMPLATE_DRIVER,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template_with_overlay#1"),
        TEMPLATE_DRIVER,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template_with_volume_driver#1"),
        TEMPLATE_DRIVER,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template_without_flavor#1"),
        TEMPLATE_DRIVER,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template_without_keypair_id#1"),
        TEMPLATE_DRIVER,
    ),
    (
        v1!("test_cluster_template.TestPost.test_create_cluster_template_without_labels#1"),
        TEMPLATE_DRIVER,
    ),
    (
        v1!("test_quota.TestQuota.test_create_quota_project_id_not_found#1"),
        KEYSTONE_MOCK,
    ),
];

/// The reason `id` cannot be replayed black-box.
pub fn black_box(id: &str) -> Option<&'static str> {
    BLACK_BOX.iter().find(|(k, _)| *k == id).map(|(_, r)| *r)
}
