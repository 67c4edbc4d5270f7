//! The catalogue of client-visible errors: every message a client can get,
//! written here and nowhere else.
//!
//! Two layers:
//! - [`ExceptionClass`] constants, one per class of
//!   `magnum/common/exception.py` (Magnum 23.0.0): name, HTTP status and
//!   message template in Magnum's `%(name)s` form, listed in
//!   [`EXCEPTION_CLASSES`]. Raising a class formats its template as Python's
//!   `%` does, and keeps it unformatted when an argument is missing, as
//!   `MagnumException.__init__` does.
//! - Constructors on [`MagnumError`] named after the exception (or, for
//!   WSME's and the controllers' literal messages, after the situation):
//!   `MagnumError::cluster_not_found(ident)`. Callers use these.
//!
//! Values shown inside messages are rendered as Python renders them
//! ([`python_semantics::python`]).

use python_semantics::python::{self, PyNone, PyRepr};

use crate::{MagnumError, Status};

/// A Magnum exception class: its name (the error's `kind`), HTTP status and
/// message template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExceptionClass {
    /// The class name (`ClusterNotFound`).
    pub name: &'static str,
    /// The HTTP status (`code` of the class, or of its nearest base).
    pub status: u16,
    /// The `message` template, with `%(name)s` placeholders.
    pub template: &'static str,
}

impl ExceptionClass {
    /// Raises the class with keyword arguments, as
    /// `ClusterNotFound(cluster=ident)`: the template formatted with
    /// `args`, or the template as it is when an argument is missing or the
    /// template does not format.
    pub fn raise(&self, args: &[(&str, &str)]) -> MagnumError {
        let message =
            format_template(self.template, args).unwrap_or_else(|| self.template.to_string());
        MagnumError::new(self.status, self.name, message)
    }

    /// Raises the class with a literal message (a positional argument in
    /// Python), which replaces the template.
    pub fn with_message(&self, message: impl Into<String>) -> MagnumError {
        MagnumError::new(self.status, self.name, message)
    }
}

/// Python's `template % args` for `%(key)s`, `%(key)d` and `%%`; `None`
/// where Python raises (a missing key, another conversion).
fn format_template(template: &str, args: &[(&str, &str)]) -> Option<String> {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        rest = &rest[i + 1..];
        if let Some(r) = rest.strip_prefix('%') {
            out.push('%');
            rest = r;
            continue;
        }
        let r = rest.strip_prefix('(')?;
        let close = r.find(')')?;
        let key = &r[..close];
        let r = &r[close + 1..];
        let r = r.strip_prefix('s').or_else(|| r.strip_prefix('d'))?;
        let (_, value) = args.iter().find(|(k, _)| *k == key)?;
        out.push_str(value);
        rest = r;
    }
    out.push_str(rest);
    Some(out)
}

macro_rules! exception_classes {
    ($($konst:ident = $name:literal, $status:literal, $template:literal;)+) => {
        $(
            #[doc = concat!("`", $name, "` (", stringify!($status), "): `", $template, "`")]
            pub const $konst: ExceptionClass = ExceptionClass {
                name: $name,
                status: $status,
                template: $template,
            };
        )+

        /// Every exception class of `magnum/common/exception.py`, in the
        /// file's order.
        pub const EXCEPTION_CLASSES: &[ExceptionClass] = &[$($konst),+];
    };
}

// `HTTPNotFound` inherits the template of `ResourceNotFound`; `ObjectError`'s
// placeholders are malformed (`%{…}s`) and never formatted.
exception_classes! {
    MAGNUM_EXCEPTION = "MagnumException", 500, "An unknown exception occurred.";
    OBJECT_NOT_FOUND = "ObjectNotFound", 404, "The %(name)s %(id)s could not be found.";
    PROJECT_NOT_FOUND = "ProjectNotFound", 404, "The %(name)s %(id)s could not be found.";
    RESOURCE_NOT_FOUND = "ResourceNotFound", 404, "The %(name)s resource %(id)s could not be found.";
    AUTHORIZATION_FAILURE = "AuthorizationFailure", 403, "%(client)s connection failed. %(message)s";
    INVALID = "Invalid", 400, "Unacceptable parameters.";
    INVALID_UUID = "InvalidUUID", 400, "Expected a uuid but received %(uuid)s.";
    INVALID_NAME = "InvalidName", 400, "Expected a name but received %(name)s.";
    INVALID_DISCOVERY_URL = "InvalidDiscoveryURL", 400, "Received invalid discovery URL '%(discovery_url)s' for discovery endpoint '%(discovery_endpoint)s'.";
    GET_DISCOVERY_URL_FAILED = "GetDiscoveryUrlFailed", 500, "Failed to get discovery url from '%(discovery_endpoint)s'.";
    INVALID_CLUSTER_DISCOVERY_URL = "InvalidClusterDiscoveryURL", 400, "Invalid discovery URL '%(discovery_url)s'.";
    INVALID_CLUSTER_SIZE = "InvalidClusterSize", 400, "Expected cluster size %(expect_size)d but get cluster size %(size)d from '%(discovery_url)s'.";
    GET_CLUSTER_SIZE_FAILED = "GetClusterSizeFailed", 500, "Failed to get the size of cluster from '%(discovery_url)s'.";
    INVALID_IDENTITY = "InvalidIdentity", 400, "Expected an uuid or int but received %(identity)s.";
    INVALID_CSR = "InvalidCsr", 400, "Received invalid csr %(csr)s.";
    INVALID_SUBNET = "InvalidSubnet", 400, "Received invalid subnet %(subnet)s.";
    INVALID_VERSION = "InvalidVersion", 400, "Received invalid tag for %(tag)s.";
    HTTP_NOT_FOUND = "HTTPNotFound", 404, "The %(name)s resource %(id)s could not be found.";
    CONFLICT = "Conflict", 409, "Conflict.";
    API_VERSIONS_INTERSECT = "ApiVersionsIntersect", 400, "Version of %(name)s %(min_ver)s %(max_ver)s intersects with another versions.";
    INVALID_PARAMETER_VALUE = "InvalidParameterValue", 400, "%(err)s";
    PATCH_ERROR = "PatchError", 400, "Couldn't apply patch '%(patch)s'. Reason: %(reason)s";
    NOT_AUTHORIZED = "NotAuthorized", 403, "Not authorized.";
    POLICY_NOT_AUTHORIZED = "PolicyNotAuthorized", 403, "Policy doesn't allow %(action)s to be performed.";
    INVALID_MAC = "InvalidMAC", 400, "Expected a MAC address but received %(mac)s.";
    INVALID_DNS = "InvalidDNS", 400, "Expected a single dns address or comma separated dns list, but received %(dns)s.";
    CONFIG_INVALID = "ConfigInvalid", 400, "Invalid configuration file. %(error_msg)s";
    CLUSTER_TEMPLATE_NOT_FOUND = "ClusterTemplateNotFound", 404, "ClusterTemplate %(clustertemplate)s could not be found.";
    CLUSTER_TEMPLATE_ALREADY_EXISTS = "ClusterTemplateAlreadyExists", 409, "A ClusterTemplate with UUID %(uuid)s already exists.";
    CLUSTER_TEMPLATE_REFERENCED = "ClusterTemplateReferenced", 400, "ClusterTemplate %(clustertemplate)s is referenced by one or multiple clusters.";
    CLUSTER_TEMPLATE_PUBLISH_DENIED = "ClusterTemplatePublishDenied", 403, "Not authorized to set public or hidden flag for cluster template.";
    CLUSTER_NOT_FOUND = "ClusterNotFound", 404, "Cluster %(cluster)s could not be found.";
    CLUSTER_ALREADY_EXISTS = "ClusterAlreadyExists", 409, "A cluster with UUID %(uuid)s already exists.";
    NOT_SUPPORTED = "NotSupported", 400, "%(operation)s is not supported.";
    CLUSTER_TYPE_NOT_SUPPORTED = "ClusterTypeNotSupported", 400, "Cluster type (%(server_type)s, %(os)s, %(coe)s) is not supported by any loaded cluster driver. Loaded drivers support: %(supported_cluster_types)s.";
    CLUSTER_TYPE_BETA_NOT_ENABLED = "ClusterTypeBetaNotEnabled", 400, "Cluster type (%(server_type)s, %(os)s, %(coe)s) is provided by the '%(driver_name)s' driver, which is a beta driver and is not enabled. Add '%(driver_name)s' to the [drivers]/enabled_beta_drivers configuration option to use it.";
    CLUSTER_DRIVER_NOT_SUPPORTED = "ClusterDriverNotSupported", 400, "Cluster driver (%(driver_name)s) not supported.";
    REQUIRED_PARAMETER_NOT_PROVIDED = "RequiredParameterNotProvided", 400, "Required parameter %(heat_param)s not provided.";
    OPERATION_IN_PROGRESS = "OperationInProgress", 400, "Cluster %(cluster_name)s already has an operation in progress.";
    VOLUME_TYPE_NOT_FOUND = "VolumeTypeNotFound", 400, "Valid volume type could not be found.";
    IMAGE_NOT_FOUND = "ImageNotFound", 400, "Image %(image_id)s could not be found.";
    IMAGE_NOT_AUTHORIZED = "ImageNotAuthorized", 403, "Not authorized for image %(image_id)s.";
    OS_DISTRO_FIELD_NOT_FOUND = "OSDistroFieldNotFound", 400, "Image %(image_id)s doesn't contain os_distro field.";
    X509_KEY_PAIR_NOT_FOUND = "X509KeyPairNotFound", 404, "A key pair %(x509keypair)s could not be found.";
    X509_KEY_PAIR_ALREADY_EXISTS = "X509KeyPairAlreadyExists", 409, "A key pair with UUID %(uuid)s already exists.";
    CERTIFICATE_STORAGE_EXCEPTION = "CertificateStorageException", 500, "Could not store certificate: %(msg)s";
    CERTIFICATE_VALIDATION_ERROR = "CertificateValidationError", 400, "Extension '%(extension)s' not allowed";
    KEY_PAIR_NOT_FOUND = "KeyPairNotFound", 404, "Unable to find keypair %(keypair)s.";
    MAGNUM_SERVICE_NOT_FOUND = "MagnumServiceNotFound", 404, "A magnum service %(magnum_service_id)s could not be found.";
    MAGNUM_SERVICE_ALREADY_EXISTS = "MagnumServiceAlreadyExists", 409, "A magnum service with ID %(id)s already exists.";
    UNSUPPORTED_K8S_QUANTITY_FORMAT = "UnsupportedK8sQuantityFormat", 400, "Unsupported quantity format for k8s cluster.";
    FLAVOR_NOT_FOUND = "FlavorNotFound", 400, "Unable to find flavor %(flavor)s.";
    FIXED_NETWORK_NOT_FOUND = "FixedNetworkNotFound", 400, "Unable to find fixed network %(network)s.";
    FIXED_SUBNET_NOT_FOUND = "FixedSubnetNotFound", 400, "Unable to find fixed subnet %(subnet)s.";
    EXTERNAL_NETWORK_NOT_FOUND = "ExternalNetworkNotFound", 400, "Unable to find external network %(network)s.";
    QUOTA_ALREADY_EXISTS = "QuotaAlreadyExists", 409, "Quota for project %(project_id)s already exists for resource %(resource)s.";
    QUOTA_NOT_FOUND = "QuotaNotFound", 404, "Quota could not be found: %(msg)s";
    RESOURCE_LIMIT_EXCEEDED = "ResourceLimitExceeded", 403, "Resource limit exceeded: %(msg)s";
    REGIONS_LIST_FAILED = "RegionsListFailed", 500, "Failed to list regions.";
    SERVICES_LIST_FAILED = "ServicesListFailed", 500, "Failed to list services.";
    CERTIFICATES_TO_CLUSTER_FAILED = "CertificatesToClusterFailed", 500, "Failed to create certificates for Cluster: %(cluster_uuid)s";
    FEDERATION_NOT_FOUND = "FederationNotFound", 404, "Federation %(federation)s could not be found.";
    FEDERATION_ALREADY_EXISTS = "FederationAlreadyExists", 409, "A federation with UUID %(uuid)s already exists.";
    MEMBER_ALREADY_EXISTS = "MemberAlreadyExists", 409, "A cluster with UUID %(uuid)s is already a member of the federation %(federation_name)s.";
    PRE_DELETION_FAILED = "PreDeletionFailed", 409, "Failed to pre-delete resources for cluster %(cluster_uuid)s, error: %(msg)s.";
    NODE_GROUP_ALREADY_EXISTS = "NodeGroupAlreadyExists", 409, "A node group with name %(name)s already exists in the cluster %(cluster_id)s.";
    NODE_GROUP_NOT_FOUND = "NodeGroupNotFound", 404, "Nodegroup %(nodegroup)s could not be found.";
    MASTER_NG_SIZE_INVALID = "MasterNGSizeInvalid", 400, "master nodegroup size of %(requested_size)s is invalid, size cannot be an even number.";
    MASTER_NG_RESIZE_NOT_SUPPORTED = "MasterNGResizeNotSupported", 400, "Resizing the master nodegroup is not supported by this driver.";
    ZERO_NODE_COUNT_NOT_SUPPORTED = "ZeroNodeCountNotSupported", 400, "Resizing a nodegroup to zero is not supported in the provided microversion.";
    FLAVOR_ZERO_ROOT_VOLUME_NOT_SUPPORTED = "FlavorZeroRootVolumeNotSupported", 400, "Flavor with zero root volume size is not supported when boot_volume_size is zero.";
    CLUSTER_UPGRADE_NOT_SUPPORTED = "ClusterUpgradeNotSupported", 400, "Cluster upgrade is not supported in the provided microversion.";
    NG_RESIZE_OUT_BOUNDS = "NGResizeOutBounds", 400, "Resizing %(nodegroup)s outside the allowed range: min_node_count = %(min_nc)s, max_node_count = %(max_nc)s";
    DELETING_DEFAULT_NG_NOT_SUPPORTED = "DeletingDefaultNGNotSupported", 400, "Deleting a default nodegroup is not supported.";
    NODE_GROUP_INVALID_INPUT = "NodeGroupInvalidInput", 409, "%(attr)s for %(nodegroup)s is invalid (%(expl)s).";
    CREATE_MASTER_NODE_GROUP = "CreateMasterNodeGroup", 400, "Creating master nodegroups is currently not supported.";
    NG_OPERATION_IN_PROGRESS = "NgOperationInProgress", 400, "Nodegroup %(nodegroup)s already has an operation in progress.";
    INVALID_CLUSTER_TEMPLATE_FOR_UPGRADE = "InvalidClusterTemplateForUpgrade", 409, "Cluster Template is not valid for upgrade: %(reason)s";
    CLUSTER_API_ADDRESS_UNAVAILABLE = "ClusterAPIAddressUnavailable", 409, "Cluster API address is not available yet";
    OBJECT_ERROR = "ObjectError", 500, "Failed to perform action %{action}s on %{obj_name}s with uuid %{obj_id}s: %{reason}s";
}

/// The `(st, os, coe)` list of [`MagnumError::cluster_type_not_supported`].
const NO_DRIVERS_LOADED: &str = "none (no cluster drivers are loaded)";

/// `a/b/c/unspecified`, the expectation of the driver-type messages.
fn or_unspecified(items: &[&str]) -> String {
    let mut out = items.join("/");
    if !out.is_empty() {
        out.push('/');
    }
    out.push_str("unspecified");
    out
}

/// Python's `str()` of an optional integer (`None` when absent).
fn int_or_none(n: Option<i64>) -> String {
    n.map_or_else(|| "None".to_string(), |n| n.to_string())
}

/// Constructors that raise a class with their `&str` arguments as the
/// template's keyword arguments: `name(arg = "key", …) => CLASS;` is
/// `pub fn name(arg: &str, …) -> Self`, which raises `CLASS` with
/// `("key", arg)`.
macro_rules! raisers {
    ($($(#[$doc:meta])* $name:ident($($arg:ident = $key:literal),*) => $class:ident;)+) => {$(
        $(#[$doc])*
        pub fn $name($($arg: &str),*) -> Self {
            $class.raise(&[$(($key, $arg)),*])
        }
    )+};
}

/// Exception classes raised with their templates, formatted with the
/// constructors' arguments.
impl MagnumError {
    raisers! {
        // Raised without arguments: the template as it is.
        /// `exception.Invalid` with its default message: `Unacceptable
        /// parameters.` (400).
        invalid_unacceptable() => INVALID;
        /// `exception.NotAuthorized`: `Not authorized.` (403).
        not_authorized_default() => NOT_AUTHORIZED;
        /// The 500 of the base class, `An unknown exception occurred.`; also the
        /// body of every unexpected error.
        magnum_exception() => MAGNUM_EXCEPTION;
        /// The 404 Magnum answers for `/<uuid>/detail`: `HTTPNotFound` raised
        /// without arguments, so the template stays unformatted.
        http_not_found_unformatted() => HTTP_NOT_FOUND;
        /// The 403 of setting `public` or `hidden` without the publish rule.
        cluster_template_publish_denied() => CLUSTER_TEMPLATE_PUBLISH_DENIED;
        /// `Valid volume type could not be found.` (400).
        volume_type_not_found() => VOLUME_TYPE_NOT_FOUND;
        /// The 400 of a bad Kubernetes quantity.
        unsupported_k8s_quantity_format() => UNSUPPORTED_K8S_QUANTITY_FORMAT;
        /// `Failed to list regions.` (500).
        regions_list_failed() => REGIONS_LIST_FAILED;
        /// `Failed to list services.` (500).
        services_list_failed() => SERVICES_LIST_FAILED;
        /// The 400 of a master nodegroup resize.
        master_ng_resize_not_supported() => MASTER_NG_RESIZE_NOT_SUPPORTED;
        /// The 400 of a zero node count below microversion 1.10.
        zero_node_count_not_supported() => ZERO_NODE_COUNT_NOT_SUPPORTED;
        /// The 400 of the root-disk check.
        flavor_zero_root_volume_not_supported() => FLAVOR_ZERO_ROOT_VOLUME_NOT_SUPPORTED;
        /// The 400 of an upgrade at microversion 1.7.
        cluster_upgrade_not_supported() => CLUSTER_UPGRADE_NOT_SUPPORTED;
        /// The 400 of a default nodegroup DELETE.
        deleting_default_ng_not_supported() => DELETING_DEFAULT_NG_NOT_SUPPORTED;
        /// The 400 of a master nodegroup POST.
        create_master_node_group() => CREATE_MASTER_NODE_GROUP;
        /// The 409 of a nodegroup POST on a cluster without API address.
        cluster_api_address_unavailable() => CLUSTER_API_ADDRESS_UNAVAILABLE;
        /// `ObjectError` (500); its template never formats.
        object_error() => OBJECT_ERROR;

        // Raised with one argument.
        /// `InvalidParameterValue` (400), whose message is the given text.
        invalid_parameter_value(message = "err") => INVALID_PARAMETER_VALUE;
        /// `NotSupported`: `<operation> is not supported.` (400).
        not_supported(operation = "operation") => NOT_SUPPORTED;
        /// `Expected a uuid but received <v>.` (400).
        invalid_uuid(value = "uuid") => INVALID_UUID;
        /// `Expected a name but received <v>.` (400).
        invalid_name(value = "name") => INVALID_NAME;
        /// The 500 of a failing discovery endpoint.
        get_discovery_url_failed(endpoint = "discovery_endpoint") => GET_DISCOVERY_URL_FAILED;
        /// `Invalid discovery URL '<u>'.` (400).
        invalid_cluster_discovery_url(url = "discovery_url") => INVALID_CLUSTER_DISCOVERY_URL;
        /// The 500 when the discovery size cannot be read.
        get_cluster_size_failed(url = "discovery_url") => GET_CLUSTER_SIZE_FAILED;
        /// `Expected an uuid or int but received <v>.` (400).
        invalid_identity(value = "identity") => INVALID_IDENTITY;
        /// `Received invalid csr <csr>.` (400).
        invalid_csr(csr = "csr") => INVALID_CSR;
        /// `Received invalid subnet <s>.` (400).
        invalid_subnet(subnet = "subnet") => INVALID_SUBNET;
        /// `Received invalid tag for <tag>.` (400).
        invalid_version(tag = "tag") => INVALID_VERSION;
        /// `Policy doesn't allow <rule> to be performed.` (403).
        policy_not_authorized(action = "action") => POLICY_NOT_AUTHORIZED;
        /// `Expected a MAC address but received <v>.` (400).
        invalid_mac(mac = "mac") => INVALID_MAC;
        /// The 400 of a bad `dns_nameserver` list.
        invalid_dns(dns = "dns") => INVALID_DNS;
        /// `Invalid configuration file. <msg>` (400).
        config_invalid(message = "error_msg") => CONFIG_INVALID;
        /// `ClusterTemplate <ident> could not be found.` (404; the cluster POST
        /// below 1.10 answers 400: use [`MagnumError::with_status`]).
        cluster_template_not_found(ident = "clustertemplate") => CLUSTER_TEMPLATE_NOT_FOUND;
        /// The 409 of a template POST with a used uuid.
        cluster_template_already_exists(uuid = "uuid") => CLUSTER_TEMPLATE_ALREADY_EXISTS;
        /// The 400 of a template PATCH or DELETE while clusters use it.
        cluster_template_referenced(ident = "clustertemplate") => CLUSTER_TEMPLATE_REFERENCED;
        /// `Cluster <ident> could not be found.` (404; 400 in a certificate
        /// POST: use [`MagnumError::with_status`]).
        cluster_not_found(ident = "cluster") => CLUSTER_NOT_FOUND;
        /// The 409 of a duplicate cluster uuid.
        cluster_already_exists(uuid = "uuid") => CLUSTER_ALREADY_EXISTS;
        /// `Cluster driver (<d>) not supported.` (400).
        cluster_driver_not_supported(driver = "driver_name") => CLUSTER_DRIVER_NOT_SUPPORTED;
        /// The 400 of a missing driver parameter.
        required_parameter_not_provided(param = "heat_param") => REQUIRED_PARAMETER_NOT_PROVIDED;
        /// The 400 of a busy cluster.
        operation_in_progress(cluster_name = "cluster_name") => OPERATION_IN_PROGRESS;
        /// `Image <id> could not be found.` (400).
        image_not_found(image = "image_id") => IMAGE_NOT_FOUND;
        /// `Not authorized for image <id>.` (403).
        image_not_authorized(image = "image_id") => IMAGE_NOT_AUTHORIZED;
        /// The 400 of an image without `os_distro`.
        os_distro_field_not_found(image = "image_id") => OS_DISTRO_FIELD_NOT_FOUND;
        /// `A key pair <k> could not be found.` (404).
        x509_key_pair_not_found(key_pair = "x509keypair") => X509_KEY_PAIR_NOT_FOUND;
        /// The 409 of a duplicate x509 key pair.
        x509_key_pair_already_exists(uuid = "uuid") => X509_KEY_PAIR_ALREADY_EXISTS;
        /// `Could not store certificate: <msg>` (500).
        certificate_storage_exception(message = "msg") => CERTIFICATE_STORAGE_EXCEPTION;
        /// `Extension '<ext>' not allowed` (400); `extension` is the Python repr
        /// of the refused extension.
        certificate_validation_error(extension = "extension") => CERTIFICATE_VALIDATION_ERROR;
        /// `Unable to find keypair <k>.` (404).
        key_pair_not_found(keypair = "keypair") => KEY_PAIR_NOT_FOUND;
        /// The 404 of an unknown service row.
        magnum_service_not_found(id = "magnum_service_id") => MAGNUM_SERVICE_NOT_FOUND;
        /// The 409 of a duplicate service row.
        magnum_service_already_exists(id = "id") => MAGNUM_SERVICE_ALREADY_EXISTS;
        /// `Unable to find flavor <f>.` (400).
        flavor_not_found(flavor = "flavor") => FLAVOR_NOT_FOUND;
        /// `Unable to find fixed network <n>.` (400).
        fixed_network_not_found(network = "network") => FIXED_NETWORK_NOT_FOUND;
        /// `Unable to find fixed subnet <s>.` (400).
        fixed_subnet_not_found(subnet = "subnet") => FIXED_SUBNET_NOT_FOUND;
        /// `Unable to find external network <n>.` (400).
        external_network_not_found(network = "network") => EXTERNAL_NETWORK_NOT_FOUND;
        /// The 500 of a failed CA rotation.
        certificates_to_cluster_failed(cluster_uuid = "cluster_uuid") => CERTIFICATES_TO_CLUSTER_FAILED;
        /// `Federation <ident> could not be found.` (404).
        federation_not_found(ident = "federation") => FEDERATION_NOT_FOUND;
        /// The 409 of a duplicate federation uuid.
        federation_already_exists(uuid = "uuid") => FEDERATION_ALREADY_EXISTS;
        /// `Nodegroup <ident> could not be found.` (404).
        node_group_not_found(ident = "nodegroup") => NODE_GROUP_NOT_FOUND;
        /// The 400 of a busy nodegroup.
        ng_operation_in_progress(nodegroup = "nodegroup") => NG_OPERATION_IN_PROGRESS;
        /// `Cluster Template is not valid for upgrade: <reason>` (409).
        invalid_cluster_template_for_upgrade(reason = "reason") => INVALID_CLUSTER_TEMPLATE_FOR_UPGRADE;

        // Raised with several arguments.
        /// `The <name> <id> could not be found.` (404).
        object_not_found(name = "name", id = "id") => OBJECT_NOT_FOUND;
        /// `The <name> resource <id> could not be found.` (404).
        resource_not_found(name = "name", id = "id") => RESOURCE_NOT_FOUND;
        /// `<client> connection failed. <message>` (403), when an OpenStack
        /// client cannot be built or used.
        authorization_failure(client = "client", message = "message") => AUTHORIZATION_FAILURE;
        /// The 400 of a discovery URL refused by its endpoint.
        invalid_discovery_url(url = "discovery_url", endpoint = "discovery_endpoint") => INVALID_DISCOVERY_URL;
        /// `Couldn't apply patch '<patch>'. Reason: <reason>` (400); `patch` is
        /// the Python repr of the operation list.
        patch_error(patch = "patch", reason = "reason") => PATCH_ERROR;
        /// The 409 of a duplicate quota.
        quota_already_exists(project_id = "project_id", resource = "resource") => QUOTA_ALREADY_EXISTS;
        /// The 409 of a federation join of a member.
        member_already_exists(uuid = "uuid", federation_name = "federation_name") => MEMBER_ALREADY_EXISTS;
        /// The 409 of a failed pre-delete.
        pre_deletion_failed(cluster_uuid = "cluster_uuid", message = "msg") => PRE_DELETION_FAILED;
        /// The 409 of a duplicate nodegroup name; Magnum fills the cluster
        /// placeholder with the cluster's name.
        node_group_already_exists(name = "name", cluster_name = "cluster_id") => NODE_GROUP_ALREADY_EXISTS;
        /// Raised at start-up only: two handler versions overlap (400).
        api_versions_intersect(name = "name", min_ver = "min_ver", max_ver = "max_ver") => API_VERSIONS_INTERSECT;
        /// `<attr> for <ng> is invalid (<expl>).` (409).
        node_group_invalid_input(attr = "attr", nodegroup = "nodegroup", explanation = "expl") => NODE_GROUP_INVALID_INPUT;
        /// The 400 when a beta driver serves the tuple but is not enabled.
        cluster_type_beta_not_enabled(server_type = "server_type", os = "os", coe = "coe", driver = "driver_name") => CLUSTER_TYPE_BETA_NOT_ENABLED;
    }
}

/// Generic classes, raised with a literal message.
impl MagnumError {
    /// `exception.Invalid` with a literal message (400).
    pub fn invalid(message: impl Into<String>) -> Self {
        INVALID.with_message(message)
    }

    /// `exception.NotAuthorized` with a literal message (403).
    pub fn not_authorized(message: impl Into<String>) -> Self {
        NOT_AUTHORIZED.with_message(message)
    }

    /// `exception.Conflict` with a literal message (409); an empty message
    /// gives the class default `Conflict.`.
    pub fn conflict(message: &str) -> Self {
        if message.is_empty() {
            CONFLICT.raise(&[])
        } else {
            CONFLICT.with_message(message)
        }
    }

    /// `NotSupported` raised with a literal message (400).
    pub fn not_supported_message(message: impl Into<String>) -> Self {
        NOT_SUPPORTED.with_message(message)
    }

    /// A copy with another status, for Magnum's per-call overrides
    /// (`ClusterTemplateNotFound` → 400 on cluster POST below 1.10,
    /// `ClusterNotFound` → 400 in a certificate POST).
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }
}

/// Exception classes raised with arguments the constructors compute.
impl MagnumError {
    /// The 404 of a quota POST for an unknown project: `The project_id <id>
    /// could not be found.`
    pub fn project_not_found(project_id: &str) -> Self {
        PROJECT_NOT_FOUND.raise(&[("name", "project_id"), ("id", project_id)])
    }

    /// The 400 of a discovery size mismatch.
    pub fn invalid_cluster_size(expect: i64, size: i64, url: &str) -> Self {
        INVALID_CLUSTER_SIZE.raise(&[
            ("expect_size", &expect.to_string()),
            ("size", &size.to_string()),
            ("discovery_url", url),
        ])
    }

    /// The 400 when no driver serves `(server_type, os, coe)`. `supported`
    /// holds the `(st, os, coe)` tuples of the loaded drivers, shown sorted;
    /// empty means no driver is loaded.
    pub fn cluster_type_not_supported(
        server_type: &str,
        os: &str,
        coe: &str,
        supported: &[&str],
    ) -> Self {
        let listed = if supported.is_empty() {
            NO_DRIVERS_LOADED.to_string()
        } else {
            let mut sorted = supported.to_vec();
            sorted.sort_unstable();
            sorted.join(", ")
        };
        CLUSTER_TYPE_NOT_SUPPORTED.raise(&[
            ("server_type", server_type),
            ("os", os),
            ("coe", coe),
            ("supported_cluster_types", &listed),
        ])
    }

    /// `Quota could not be found: project_id <p> resource <r>.` (404).
    pub fn quota_not_found(project_id: &str, resource: &str) -> Self {
        QUOTA_NOT_FOUND.raise(&[(
            "msg",
            &format!("project_id {project_id} resource {resource}."),
        )])
    }

    /// The 404 of an unknown quota marker: `Quota could not be found: quota
    /// id <n> .` (with Magnum's space).
    pub fn quota_not_found_by_id(id: &str) -> Self {
        QUOTA_NOT_FOUND.raise(&[("msg", &format!("quota id {id} ."))])
    }

    /// The 403 of the cluster quota.
    pub fn resource_limit_exceeded(limit: i64) -> Self {
        RESOURCE_LIMIT_EXCEEDED.raise(&[(
            "msg",
            &format!(
                "You have reached the maximum clusters per project, {limit}. You may delete a \
                 cluster to make room for a new one."
            ),
        )])
    }

    /// The 404 of a federation unjoin of a non-member (Magnum raises
    /// `HTTPNotFound` with a literal message).
    pub fn federation_member_not_found(uuid: &str, federation_name: &str) -> Self {
        HTTP_NOT_FOUND.with_message(format!(
            "Cluster {uuid} is not a member of the federation {federation_name}."
        ))
    }

    /// The 400 of an even (or < 1) master count.
    pub fn master_ng_size_invalid(size: i64) -> Self {
        MASTER_NG_SIZE_INVALID.raise(&[("requested_size", &size.to_string())])
    }

    /// The 400 of a resize outside min/max; no maximum renders as `None`.
    pub fn ng_resize_out_bounds(nodegroup: &str, min: i64, max: Option<i64>) -> Self {
        NG_RESIZE_OUT_BOUNDS.raise(&[
            ("nodegroup", nodegroup),
            ("min_nc", &min.to_string()),
            ("max_nc", &int_or_none(max)),
        ])
    }

    /// [`MagnumError::invalid_cluster_template_for_upgrade`] for a
    /// non-default nodegroup asked to move to another template.
    pub fn node_group_upgrade_template_mismatch(nodegroup: &str, template_name: &str) -> Self {
        Self::invalid_cluster_template_for_upgrade(&format!(
            "Nodegroup {nodegroup} can be upgraded only to match cluster's template \
             ({template_name})."
        ))
    }
}

/// Literal messages of the controllers, conductor and drivers, raised as
/// one of the classes above.
impl MagnumError {
    /// The 409 of an ambiguous cluster name.
    pub fn multiple_clusters() -> Self {
        Self::conflict(
            "Multiple clusters exist with same name. Please use the cluster uuid instead.",
        )
    }

    /// The 409 of an ambiguous template name.
    pub fn multiple_cluster_templates() -> Self {
        Self::conflict(
            "Multiple ClusterTemplates exist with same name. Please use the ClusterTemplate \
             uuid instead.",
        )
    }

    /// The 409 of an ambiguous nodegroup name.
    pub fn multiple_node_groups() -> Self {
        Self::conflict(
            "Multiple nodegroups exist with same name. Please use the nodegroup uuid instead.",
        )
    }

    /// The 409 of an ambiguous federation name.
    pub fn multiple_federations() -> Self {
        Self::conflict(
            "Multiple federations exist with same name. Please use the federation uuid instead.",
        )
    }

    /// The 409 of an ambiguous OpenStack resource name; `kind` is `external
    /// networks`, `networks`, `subnets` or `images` and `id_name` the
    /// matching `external network`, `network`, `subnet` or `image`.
    pub fn multiple_openstack_resources(kind: &str, name: &str, id_name: &str) -> Self {
        Self::conflict(&format!(
            "Multiple {kind} exist with same name '{name}'. Please use the {id_name} ID instead."
        ))
    }

    /// `cannot change <resource> property(ies) <f1>, <f2>.` (400; resource is
    /// `cluster` or `federation`).
    pub fn cannot_change_properties(resource: &str, fields: &[&str]) -> Self {
        Self::invalid_parameter_value(&format!(
            "cannot change {resource} property(ies) {}.",
            fields.join(", ")
        ))
    }

    /// `Requested COE type <coe> is not supported.` (400); an absent COE is
    /// reported as `Unset`.
    pub fn unsupported_coe(coe: &str) -> Self {
        Self::invalid_parameter_value(&format!("Requested COE type {coe} is not supported."))
    }

    /// `<subject>, expecting a <a/b/unspecified> <expected>` (400), where
    /// `supported` lists the values that would do.
    fn expecting(subject: &str, supported: &[&str], expected: &str) -> Self {
        Self::invalid_parameter_value(&format!(
            "{subject}, expecting a {} {expected}",
            or_unspecified(supported)
        ))
    }

    /// The 400 of a network driver outside the supported list.
    pub fn network_driver_not_supported(driver: &str, supported: &[&str]) -> Self {
        Self::expecting(
            &format!("Network driver type {driver} is not supported"),
            supported,
            "network driver.",
        )
    }

    /// The 400 of a network driver outside the allowed list (with Magnum's
    /// trailing space).
    pub fn network_driver_not_allowed(driver: &str, allowed: &[&str]) -> Self {
        Self::expecting(
            &format!("Network driver type {driver} is not allowed"),
            allowed,
            "network driver. ",
        )
    }

    /// The 400 of an unsupported volume driver.
    pub fn volume_driver_not_supported(driver: &str, supported: &[&str]) -> Self {
        Self::expecting(
            &format!("Volume driver type {driver} is not supported"),
            supported,
            "volume driver.",
        )
    }

    /// The 400 of an unsupported server type.
    pub fn server_type_not_supported(server_type: &str, supported: &[&str]) -> Self {
        Self::expecting(
            &format!("Server type {server_type} is not supported"),
            supported,
            "server type.",
        )
    }

    /// The 400 of a too small devicemapper volume; no size renders as
    /// `None`.
    pub fn devicemapper_volume_size(size: Option<i64>) -> Self {
        Self::invalid_parameter_value(&format!(
            "docker volume size {} GB is not valid, expecting minimum value 3GB for \
             devicemapper storage driver.",
            int_or_none(size)
        ))
    }

    /// The 400 of `master_count` > 1 without a load balancer.
    pub fn master_count_without_lb() -> Self {
        Self::invalid_parameter_value("master_count must be 1 when master_lb_enabled is False")
    }

    /// `Must provide a valid project ID.` (400).
    pub fn quota_project_missing() -> Self {
        Self::invalid_parameter_value("Must provide a valid project ID.")
    }

    /// The 400 of an unknown stats type.
    pub fn invalid_stats_type() -> Self {
        Self::invalid_parameter_value("Invalid stats type. Allowed values are 'cluster'")
    }

    /// The 400 of a CA rotation on a cluster without TLS.
    pub fn rotate_ca_non_tls() -> Self {
        Self::invalid_parameter_value(
            "Rotating the CA certificate on a non-TLS cluster is not supported",
        )
    }

    /// The 400 of a federation without host cluster.
    pub fn federation_no_host_cluster() -> Self {
        Self::invalid_parameter_value("No hostcluster specified. Please specify a hostcluster_id.")
    }

    /// The 400 of a federation without properties.
    pub fn federation_no_properties() -> Self {
        Self::invalid_parameter_value("Please specify a `properties` dict for the federation.")
    }

    /// The 400 of a federation without `dns-zone`.
    pub fn federation_no_dns_zone() -> Self {
        Self::invalid_parameter_value("No DNS zone specified. Please specify a `dns-zone`.")
    }

    /// The conductor's 400 for an upgrade in a refused status.
    pub fn upgrade_status_not_supported(status: Status) -> Self {
        Self::not_supported(&format!("Upgrading a cluster when status is \"{status}\""))
    }

    /// The conductor's 400 for a CA rotation in a refused status.
    pub fn update_status_not_supported(status: Status) -> Self {
        Self::not_supported(&format!("Updating a cluster when status is \"{status}\""))
    }

    /// The conductor's 400 for a credential rotation in a refused status
    /// (the module path really is part of Magnum's message).
    pub fn credential_rotation_status_not_supported(status: Status) -> Self {
        Self::not_supported(&format!(
            "magnum.conductor.handlers.credential_conductor when cluster status is \"{status}\""
        ))
    }

    /// The 400 of a driver without credential rotation.
    pub fn credential_rotation_not_supported_by_driver() -> Self {
        Self::not_supported_message("Credential rotation is not supported by driver.")
    }

    /// The 400 of a driver without CA rotation.
    pub fn rotate_ca_not_supported_by_driver() -> Self {
        Self::not_supported_message("'rotate_ca_certificate' is not supported by this driver.")
    }

    /// The synchronous 409 where Magnum's conductor would silently drop a
    /// cluster update or resize: `<operation> a cluster when status is
    /// "<status>" is not supported.`
    // Deviation: Magnum answers 202 and drops the operation in the
    // conductor.
    pub fn state_guard_conflict(operation: &str, status: Status) -> Self {
        NOT_SUPPORTED
            .with_message(format!(
                "{operation} a cluster when status is \"{status}\" is not supported."
            ))
            .with_status(409)
    }

    /// The synchronous 409 of a nodegroup create or update in a refused
    /// status: `<operation> when nodegroup status is "<status>" is not
    /// supported.`
    // Deviation: Magnum answers 202 and drops the operation in the
    // conductor.
    pub fn node_group_state_guard_conflict(operation: &str, status: Status) -> Self {
        NOT_SUPPORTED
            .with_message(format!(
                "{operation} when nodegroup status is \"{status}\" is not supported."
            ))
            .with_status(409)
    }
}

/// WSME's `Value not a valid <kind>: <value>` (400) for each container
/// kind: `$plain` of a value on its own, `$inside` of a value inside a body
/// (WSME names the body argument and shows the whole body).
macro_rules! not_a_valid {
    ($($kind:literal: $plain:ident, $inside:ident;)+) => {$(
        #[doc = concat!("The 400 of a non-", $kind, " where a ", $kind, " is required.")]
        pub fn $plain(field: &str, value: &(impl PyRepr + ?Sized)) -> Self {
            Self::$inside(field, value, value)
        }

        #[doc = concat!("[`MagnumError::", stringify!($plain), "`] of a value inside a body: ")]
        #[doc = "WSME names the body argument and shows the whole body."]
        pub fn $inside(
            arg: &str,
            body: &(impl PyRepr + ?Sized),
            value: &(impl PyRepr + ?Sized),
        ) -> Self {
            let reason = format!(concat!("Value not a valid ", $kind, ": {}"), python::str_of(value));
            Self::invalid_input(arg, body, &reason)
        }
    )+};
}

/// WSME's `ClientSideError`s (400), whose messages name the constructors'
/// `&str` arguments: `name(arg, …) => "… {arg} …";`.
macro_rules! client_side_errors {
    ($($(#[$doc:meta])* $name:ident($($arg:ident),*) => $message:literal;)+) => {$(
        $(#[$doc])*
        pub fn $name($($arg: &str),*) -> Self {
            Self::client_side(format!($message))
        }
    )+};
}

/// WSME's and the API layer's own messages (pagination, bodies, arguments,
/// attribute types, JSON patch).
impl MagnumError {
    fn client_side(message: impl Into<String>) -> Self {
        MagnumError::new(400, "ClientSideError", message)
    }

    client_side_errors! {
        /// `Limit must be positive` (400).
        limit_not_positive() => "Limit must be positive";
        /// The 400 of a bad `sort_dir`.
        invalid_sort_dir(dir) => "Invalid sort direction: {dir}. Acceptable values are 'asc' or 'desc'";
        /// `Request is not in valid JSON format` (400).
        invalid_json_body() => "Request is not in valid JSON format";
        /// The 400 of patching an internal attribute.
        patch_internal_attribute(path) => "'{path}' is an internal attribute and can not be updated";
        /// The 400 of removing a mandatory attribute.
        patch_mandatory_attribute(path) => "'{path}' is a mandatory attribute and can not be removed";
        /// The 400 of `add`/`replace` without a value.
        patch_value_missing() => "'add' and 'replace' operations needs value";
        /// The 400 of adding an unknown top-level attribute.
        patch_add_new_attribute(path) => "Adding a new attribute {path} to the root of the resource is not allowed.";
        /// The 400 of adding an attribute that is set.
        patch_attribute_exists(path) => "The attribute {path} has existed, please use 'replace' operation instead.";
    }

    /// The 400 of a bad `sort_key`.
    pub fn invalid_sort_key(key: &str) -> Self {
        INVALID_PARAMETER_VALUE.with_message(format!(
            "The sort_key value \"{key}\" is an invalid field for sorting"
        ))
    }

    /// WSME's `Invalid input for field/attribute <f>. Value: '<v>'.
    /// <reason>` (400); the value is shown with Python's `str()`.
    pub fn invalid_input(field: &str, value: &(impl PyRepr + ?Sized), reason: &str) -> Self {
        Self::invalid_input_raw(field, &python::str_of(value), reason)
    }

    /// [`MagnumError::invalid_input`] with the value already rendered.
    pub fn invalid_input_raw(field: &str, value: &str, reason: &str) -> Self {
        MagnumError::new(
            400,
            "InvalidInput",
            format!("Invalid input for field/attribute {field}. Value: '{value}'. {reason}"),
        )
    }

    /// The 400 of a read-only attribute sent in a body.
    pub fn read_only_field(field: &str, value: &(impl PyRepr + ?Sized)) -> Self {
        Self::invalid_input(field, value, "Cannot set read only field.")
    }

    /// The 400 of an absent mandatory attribute.
    pub fn mandatory_field_missing(field: &str) -> Self {
        Self::invalid_input(field, &PyNone, "Mandatory field missing.")
    }

    /// The 400 of a value outside an enum; `allowed` in the enum's order.
    pub fn invalid_enum(field: &str, value: &(impl PyRepr + ?Sized), allowed: &[&str]) -> Self {
        Self::invalid_input(
            field,
            value,
            &format!("Value should be one of: {}", allowed.join(", ")),
        )
    }

    /// The 400 of a string not matching its pattern.
    pub fn pattern_mismatch(field: &str, value: &(impl PyRepr + ?Sized), pattern: &str) -> Self {
        Self::invalid_input(
            field,
            value,
            &format!("Value should match the pattern {pattern}"),
        )
    }

    /// The 400 of a string above its maximum length.
    pub fn too_long(field: &str, value: &(impl PyRepr + ?Sized), max: usize) -> Self {
        Self::invalid_input(
            field,
            value,
            &format!("Value should have a maximum character requirement of {max}"),
        )
    }

    /// The 400 of a string below its minimum length.
    pub fn too_short(field: &str, value: &(impl PyRepr + ?Sized), min: usize) -> Self {
        Self::invalid_input(
            field,
            value,
            &format!("Value should have a minimum character requirement of {min}"),
        )
    }

    /// The 400 of an integer below its minimum.
    pub fn below_minimum(field: &str, value: &(impl PyRepr + ?Sized), min: i64) -> Self {
        Self::invalid_input(
            field,
            value,
            &format!("Value should be greater or equal to {min}"),
        )
    }

    /// The 400 of an integer above its maximum.
    pub fn above_maximum(field: &str, value: &(impl PyRepr + ?Sized), max: i64) -> Self {
        Self::invalid_input(
            field,
            value,
            &format!("Value should be lower or equal to {max}"),
        )
    }

    /// The 400 of a non-string where a string is required.
    pub fn not_a_string(field: &str, value: &(impl PyRepr + ?Sized)) -> Self {
        Self::invalid_input(field, value, "Value should be string")
    }

    /// WSME's `Wrong type. Expected '<expected>', got '<class 'x'>'`;
    /// `expected` is Python's rendering of the type(s), e.g. `<class 'str'>`.
    pub fn wrong_type(field: &str, value: &(impl PyRepr + ?Sized), expected: &str) -> Self {
        Self::invalid_input(
            field,
            value,
            &format!(
                "Wrong type. Expected '{expected}', got '{}'",
                python::class_of(value)
            ),
        )
    }

    /// [`MagnumError::wrong_type`] for an element of a container: the
    /// message shows the container (`shown`) and the element's class.
    pub fn wrong_element_type(
        field: &str,
        shown: &(impl PyRepr + ?Sized),
        element: &(impl PyRepr + ?Sized),
        expected: &str,
    ) -> Self {
        Self::invalid_input(
            field,
            shown,
            &format!(
                "Wrong type. Expected '{expected}', got '{}'",
                python::class_of(element)
            ),
        )
    }

    not_a_valid! {
        "list": not_a_valid_list, not_a_valid_list_in;
        "dict": not_a_valid_dict, not_a_valid_dict_in;
    }

    /// The 400 of `int()` of a body value beyond 64 bits (CPython's text
    /// for a C long); WSME names the body argument and shows the whole body.
    pub fn int_too_large(arg: &str, body: &(impl PyRepr + ?Sized)) -> Self {
        Self::invalid_input(arg, body, "Python int too large to convert to C long")
    }

    /// The 400 of `int()` of a body value that is neither a number nor a
    /// string (CPython's `TypeError` text).
    pub fn int_argument_type(
        arg: &str,
        body: &(impl PyRepr + ?Sized),
        value: &(impl PyRepr + ?Sized),
    ) -> Self {
        let reason = format!(
            "int() argument must be a string, a bytes-like object or a real number, not '{}'",
            value.class_name()
        );
        Self::invalid_input(arg, body, &reason)
    }

    /// A `null` label value: Magnum's unhandled `TypeError`, with its text.
    pub fn label_value_none(key: &str) -> Self {
        Self::server_error(format!("Field `labels[{key}]' cannot be None"))
    }

    /// The 400 of `int()` on a non-numeric string in a body; WSME names the
    /// body argument and shows the whole body.
    pub fn invalid_int_literal(arg: &str, body: &(impl PyRepr + ?Sized), value: &str) -> Self {
        Self::invalid_input(arg, body, &python::invalid_int_literal(value))
    }

    /// The 400 of a query parameter that does not convert:
    /// `… unable to convert to <type>. Error: <error>`.
    pub fn unable_to_convert(field: &str, value: &str, type_name: &str, error: &str) -> Self {
        Self::invalid_input_raw(
            field,
            value,
            &format!("unable to convert to {type_name}. Error: {error}"),
        )
    }

    /// The 400 of a non-integer query parameter.
    pub fn invalid_query_int(field: &str, value: &str) -> Self {
        Self::unable_to_convert(field, value, "int", &python::invalid_int_literal(value))
    }

    /// The 400 of a `marker` that is not a UUID.
    pub fn invalid_marker(value: &str) -> Self {
        Self::unable_to_convert("marker", value, "uuid", &Self::invalid_uuid(value).message)
    }

    /// `Unknown argument: "<name>"` (400); several names are joined by `, `.
    pub fn unknown_argument(name: &str) -> Self {
        MagnumError::new(
            400,
            "UnknownArgument",
            format!("Unknown argument: \"{name}\""),
        )
    }

    /// `Missing argument: "<name>"` (400).
    pub fn missing_argument(name: &str) -> Self {
        MagnumError::new(
            400,
            "MissingArgument",
            format!("Missing argument: \"{name}\""),
        )
    }

    /// WSME's unknown-attribute 400: `Unknown attribute for argument <arg>:
    /// <f>`, plural with several names. Magnum lists them in Python set
    /// order; they are shown in the given order.
    pub fn unknown_attribute(arg: &str, attrs: &[&str]) -> Self {
        let noun = if attrs.len() > 1 {
            "attributes"
        } else {
            "attribute"
        };
        MagnumError::new(
            400,
            "UnknownAttribute",
            format!("Unknown {noun} for argument {arg}: {}", attrs.join(", ")),
        )
    }

    /// `Request must be a JSON dict` (400).
    pub fn request_not_a_dict() -> Self {
        Self::invalid("Request must be a JSON dict")
    }

    /// `Request body could not be read.` (400).
    pub fn request_body_unreadable() -> Self {
        Self::invalid("Request body could not be read.")
    }

    /// `Request is too large.` (413), in Magnum's error body.
    // Deviation: Magnum has no body limit; a body above the limit is
    // refused.
    pub fn request_too_large() -> Self {
        MagnumError::new(413, "RequestEntityTooLarge", "Request is too large.")
    }

    /// `Not implemented.` (501).
    pub fn not_implemented() -> Self {
        MagnumError::new(501, "NotImplemented", "Not implemented.")
    }

    /// `Unknown mimetype: <type>` (415).
    pub fn unknown_mimetype(mimetype: &str) -> Self {
        MagnumError::new(
            415,
            "ClientSideError",
            format!("Unknown mimetype: {mimetype}"),
        )
    }

    /// Bad input that Magnum does not validate: a Python exception escapes
    /// WSME's client-error handling and Magnum answers 500 with
    /// `str(exception)`.
    // Deviation: the message is kept but the status is 400: bad input is
    // the client's error, never a 500.
    pub fn server_error(message: impl Into<String>) -> Self {
        MagnumError::new(400, "ServerError", message)
    }

    /// A `types.boolean` value that oslo.utils' `bool_from_string(strict=True)`
    /// refuses (`"maybe"`, `2`), with oslo.utils' message.
    // Deviation: Magnum raises `Invalid` built from the ValueError, which
    // cannot be rendered (an unhandled 500 outside the error format); we
    // answer 400.
    pub fn invalid_boolean(field: &str, value: &(impl PyRepr + ?Sized)) -> Self {
        Self::invalid_input(
            field,
            value,
            &format!(
                "Unrecognized value '{}', acceptable values are: '0', '1', 'f', 'false', 'n', \
                 'no', 'off', 'on', 't', 'true', 'y', 'yes'",
                python::str_of(value)
            ),
        )
    }

    /// WSME's `IntegerType` bounds compared with a value that is not a
    /// number (a patched string): Python's `TypeError` text.
    pub fn int_comparison_type(field: &str, value: &(impl PyRepr + ?Sized)) -> Self {
        Self::invalid_input(
            field,
            value,
            &format!(
                "'<' not supported between instances of '{}' and 'int'",
                value.class_name()
            ),
        )
    }

    /// `int()` of an infinite float in a body (CPython's `OverflowError`);
    /// WSME names the body argument and shows the whole body.
    pub fn int_of_infinity(arg: &str, body: &(impl PyRepr + ?Sized)) -> Self {
        Self::invalid_input(arg, body, "cannot convert float infinity to integer")
    }

    /// `validate_dns` on a value that is not a string: Magnum's unhandled
    /// `AttributeError`, with its text.
    pub fn dns_not_a_string(value: &(impl PyRepr + ?Sized)) -> Self {
        Self::server_error(format!(
            "'{}' object has no attribute 'split'",
            value.class_name()
        ))
    }

    /// WSME's conversion of a date-time body value it cannot parse; names
    /// the body argument and shows the whole body. The `%s` really is in
    /// Magnum's message (the parser's unformatted first argument).
    pub fn unknown_datetime_format(arg: &str, body: &(impl PyRepr + ?Sized)) -> Self {
        Self::invalid_input(arg, body, "Unknown string format: %s")
    }

    /// oslo.versionedobjects' coercion of a dict field (`labels`) given
    /// something else, when Magnum rebuilds an object from patched values:
    /// its unhandled `ValueError`, with its text.
    pub fn object_field_dict_required(field: &str, value: &(impl PyRepr + ?Sized)) -> Self {
        Self::server_error(format!(
            "A dict is required in field {field}, not a {}",
            value.class_name()
        ))
    }

    /// oslo.versionedobjects' coercion of a dict-of-strings field entry that
    /// is neither a string nor a number.
    pub fn object_field_string_required(
        field: &str,
        key: &str,
        value: &(impl PyRepr + ?Sized),
    ) -> Self {
        Self::server_error(format!(
            "A string is required in field {field}[{key}], not a {}",
            value.class_name()
        ))
    }

    /// oslo.versionedobjects' coercion of an enum field (`coe`) to a value
    /// outside the enum.
    pub fn object_field_value_invalid(value: &(impl PyRepr + ?Sized)) -> Self {
        Self::server_error(format!("Field value {} is invalid", python::str_of(value)))
    }

    /// oslo.versionedobjects' coercion of an integer field given a string
    /// that `int()` refuses.
    pub fn object_field_int_literal(value: &str) -> Self {
        Self::server_error(python::invalid_int_literal(value))
    }

    /// The `boot_volume_size` label is not an integer (oslo.utils'
    /// `validate_integer` message).
    // Deviation: Magnum fails with an unhandled 500 carrying this message;
    // we answer 400.
    pub fn boot_volume_size_not_integer() -> Self {
        Self::invalid_parameter_value("boot_volume_size must be an integer")
    }

    /// A synchronous driver call that could not answer (it trapped, ran
    /// past its deadline, answered more than it may or broke the contract):
    /// `Cluster driver <driver> failed in <function> (<fault>). <reason>`,
    /// 503 when the driver is shut off or ran out of time (`fault`
    /// `breaker_open`, `timeout`), 500 otherwise. The title names the
    /// driver, the call and the kind of fault; the detail says why, never
    /// more of the driver than that.
    // Deviation: an exception a Magnum driver raises in a synchronous
    // validation reaches the client as a 500 with `str(exception)`, or
    // Magnum's unknown-exception text.
    pub fn driver_fault(driver: &str, function: &str, fault: &str, reason: &str) -> Self {
        let status = if matches!(fault, "breaker_open" | "timeout") {
            503
        } else {
            500
        };
        MagnumError::new(
            status,
            "ClusterDriverFault",
            format!("Cluster driver {driver} failed in {function} ({fault}). {reason}"),
        )
    }

    /// A synchronous driver call that answered `failed` instead of a client
    /// error: `Cluster driver <driver> failed: <reason>` (500).
    pub fn driver_failed(driver: &str, reason: &str) -> Self {
        MagnumError::new(
            500,
            "ClusterDriverFault",
            format!("Cluster driver {driver} failed: {reason}"),
        )
    }
}

#[cfg(test)]
mod tests;
