package magnum

import (
	"fmt"
	"math"
	"math/big"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file is the catalogue of client-visible errors. Each constructor is
// named after the Magnum exception class (magnum/common/exception.py) or, for
// WSME and literal messages, after the situation; Kind is the class name.
// Messages reproduce Magnum 23.0.0 byte for byte.

func newCatalogueError(status int, kind, msg string) *Error {
	return &Error{Status: status, Kind: kind, Message: msg}
}

// ---- generic classes ----

// MagnumException is the 500 of the base class.
func MagnumException() *Error {
	return newCatalogueError(http.StatusInternalServerError, "MagnumException", "An unknown exception occurred.")
}

// ObjectNotFound is "The <name> <id> could not be found." (404).
func ObjectNotFound(name, id string) *Error {
	return newCatalogueError(http.StatusNotFound, "ObjectNotFound", fmt.Sprintf("The %s %s could not be found.", name, id))
}

// ProjectNotFound is the 404 of a quota POST for an unknown project.
func ProjectNotFound(projectID string) *Error {
	return newCatalogueError(http.StatusNotFound, "ProjectNotFound", fmt.Sprintf("The project_id %s could not be found.", projectID))
}

// ResourceNotFound is "The <name> resource <id> could not be found." (404).
func ResourceNotFound(name, id string) *Error {
	return newCatalogueError(http.StatusNotFound, "ResourceNotFound", fmt.Sprintf("The %s resource %s could not be found.", name, id))
}

// HTTPNotFoundUnformatted is the 404 Magnum answers for /<uuid>/detail: the
// exception is raised without arguments, so the template stays unformatted.
func HTTPNotFoundUnformatted() *Error {
	return newCatalogueError(http.StatusNotFound, "HTTPNotFound", "The %(name)s resource %(id)s could not be found.")
}

// AuthorizationFailure is the 403 raised when an OpenStack client cannot be
// built or used.
func AuthorizationFailure(client, message string) *Error {
	return newCatalogueError(http.StatusForbidden, "AuthorizationFailure", fmt.Sprintf("%s connection failed. %s", client, message))
}

// InvalidUnacceptable is exception.Invalid with its default message.
func InvalidUnacceptable() *Error {
	return newCatalogueError(http.StatusBadRequest, "Invalid", "Unacceptable parameters.")
}

// InvalidUUID is "Expected a uuid but received <v>." (400).
func InvalidUUID(v string) *Error {
	return newCatalogueError(http.StatusBadRequest, "InvalidUUID", fmt.Sprintf("Expected a uuid but received %s.", v))
}

// InvalidName is "Expected a name but received <v>." (400).
func InvalidName(v string) *Error {
	return newCatalogueError(http.StatusBadRequest, "InvalidName", fmt.Sprintf("Expected a name but received %s.", v))
}

// InvalidDiscoveryURL is the 400 for a discovery URL refused by its endpoint.
func InvalidDiscoveryURL(url, endpoint string) *Error {
	return newCatalogueError(http.StatusBadRequest, "InvalidDiscoveryURL", fmt.Sprintf("Received invalid discovery URL '%s' for discovery endpoint '%s'.", url, endpoint))
}

// GetDiscoveryURLFailed is the 500 when the discovery endpoint fails.
func GetDiscoveryURLFailed(endpoint string) *Error {
	return newCatalogueError(http.StatusInternalServerError, "GetDiscoveryUrlFailed", fmt.Sprintf("Failed to get discovery url from '%s'.", endpoint))
}

// InvalidClusterDiscoveryURL is "Invalid discovery URL '<u>'." (400).
func InvalidClusterDiscoveryURL(url string) *Error {
	return newCatalogueError(http.StatusBadRequest, "InvalidClusterDiscoveryURL", fmt.Sprintf("Invalid discovery URL '%s'.", url))
}

// InvalidClusterSize is the 400 for a discovery size mismatch.
func InvalidClusterSize(expect, size int, url string) *Error {
	return newCatalogueError(http.StatusBadRequest, "InvalidClusterSize", fmt.Sprintf("Expected cluster size %d but get cluster size %d from '%s'.", expect, size, url))
}

// GetClusterSizeFailed is the 500 when the discovery size cannot be read.
func GetClusterSizeFailed(url string) *Error {
	return newCatalogueError(http.StatusInternalServerError, "GetClusterSizeFailed", fmt.Sprintf("Failed to get the size of cluster from '%s'.", url))
}

// InvalidIdentity is "Expected an uuid or int but received <v>." (400).
func InvalidIdentity(v string) *Error {
	return newCatalogueError(http.StatusBadRequest, "InvalidIdentity", fmt.Sprintf("Expected an uuid or int but received %s.", v))
}

// InvalidCsr is "Received invalid csr <csr>." (400).
func InvalidCsr(csr string) *Error {
	return newCatalogueError(http.StatusBadRequest, "InvalidCsr", fmt.Sprintf("Received invalid csr %s.", csr))
}

// InvalidSubnet is "Received invalid subnet <s>." (400).
func InvalidSubnet(subnet string) *Error {
	return newCatalogueError(http.StatusBadRequest, "InvalidSubnet", fmt.Sprintf("Received invalid subnet %s.", subnet))
}

// InvalidVersion is "Received invalid tag for <tag>." (400).
func InvalidVersion(tag string) *Error {
	return newCatalogueError(http.StatusBadRequest, "InvalidVersion", fmt.Sprintf("Received invalid tag for %s.", tag))
}

// Conflict is exception.Conflict with a literal message (409); an empty
// message gives the class default "Conflict.".
func Conflict(msg string) *Error {
	if msg == "" {
		msg = "Conflict."
	}
	return newCatalogueError(http.StatusConflict, "Conflict", msg)
}

// InvalidParameterValue is the 400 whose message is the given text.
func InvalidParameterValue(msg string) *Error {
	return newCatalogueError(http.StatusBadRequest, "InvalidParameterValue", msg)
}

// PatchError is "Couldn't apply patch '<patch>'. Reason: <reason>" (400);
// patch is the Python repr of the operation list.
func PatchError(patch, reason string) *Error {
	return newCatalogueError(http.StatusBadRequest, "PatchError", fmt.Sprintf("Couldn't apply patch '%s'. Reason: %s", patch, reason))
}

// NotAuthorizedDefault is exception.NotAuthorized: "Not authorized." (403).
func NotAuthorizedDefault() *Error {
	return newCatalogueError(http.StatusForbidden, "NotAuthorized", "Not authorized.")
}

// PolicyNotAuthorized is "Policy doesn't allow <rule> to be performed." (403).
func PolicyNotAuthorized(action string) *Error {
	return newCatalogueError(http.StatusForbidden, "PolicyNotAuthorized", fmt.Sprintf("Policy doesn't allow %s to be performed.", action))
}

// InvalidMAC is "Expected a MAC address but received <v>." (400).
func InvalidMAC(mac string) *Error {
	return newCatalogueError(http.StatusBadRequest, "InvalidMAC", fmt.Sprintf("Expected a MAC address but received %s.", mac))
}

// InvalidDNS is the 400 for a bad dns_nameserver list.
func InvalidDNS(dns string) *Error {
	return newCatalogueError(http.StatusBadRequest, "InvalidDNS", fmt.Sprintf("Expected a single dns address or comma separated dns list, but received %s.", dns))
}

// ConfigInvalid is "Invalid configuration file. <msg>" (400).
func ConfigInvalid(msg string) *Error {
	return newCatalogueError(http.StatusBadRequest, "ConfigInvalid", "Invalid configuration file. "+msg)
}

// ---- resources ----

// ClusterTemplateNotFound is "ClusterTemplate <ident> could not be found."
// (404; the cluster POST below 1.10 answers 400: use WithStatus).
func ClusterTemplateNotFound(ident string) *Error {
	return newCatalogueError(http.StatusNotFound, "ClusterTemplateNotFound", fmt.Sprintf("ClusterTemplate %s could not be found.", ident))
}

// ClusterTemplateAlreadyExists is the 409 of a template POST with a used uuid.
func ClusterTemplateAlreadyExists(uuid string) *Error {
	return newCatalogueError(http.StatusConflict, "ClusterTemplateAlreadyExists", fmt.Sprintf("A ClusterTemplate with UUID %s already exists.", uuid))
}

// ClusterTemplateReferenced is the 400 for a template used by clusters.
func ClusterTemplateReferenced(ident string) *Error {
	return newCatalogueError(http.StatusBadRequest, "ClusterTemplateReferenced", fmt.Sprintf("ClusterTemplate %s is referenced by one or multiple clusters.", ident))
}

// ClusterTemplatePublishDenied is the 403 for setting public/hidden.
func ClusterTemplatePublishDenied() *Error {
	return newCatalogueError(http.StatusForbidden, "ClusterTemplatePublishDenied", "Not authorized to set public or hidden flag for cluster template.")
}

// ClusterNotFound is "Cluster <ident> could not be found." (404; 400 on a
// certificate POST: use WithStatus).
func ClusterNotFound(ident string) *Error {
	return newCatalogueError(http.StatusNotFound, "ClusterNotFound", fmt.Sprintf("Cluster %s could not be found.", ident))
}

// ClusterAlreadyExists is the 409 for a duplicate cluster uuid.
func ClusterAlreadyExists(uuid string) *Error {
	return newCatalogueError(http.StatusConflict, "ClusterAlreadyExists", fmt.Sprintf("A cluster with UUID %s already exists.", uuid))
}

// NotSupported is "<operation> is not supported." (400).
func NotSupported(operation string) *Error {
	return newCatalogueError(http.StatusBadRequest, "NotSupported", operation+" is not supported.")
}

// NotSupportedMessage is NotSupported raised with a literal message.
func NotSupportedMessage(msg string) *Error {
	return newCatalogueError(http.StatusBadRequest, "NotSupported", msg)
}

// ClusterTypeNotSupported is the 400 when no driver serves the tuple.
// supported lists "(st, os, coe)" tuples; empty means no driver is loaded.
func ClusterTypeNotSupported(serverType, os, coe string, supported []string) *Error {
	s := "none (no cluster drivers are loaded)"
	if len(supported) > 0 {
		sorted := append([]string(nil), supported...)
		sort.Strings(sorted)
		s = strings.Join(sorted, ", ")
	}
	return newCatalogueError(http.StatusBadRequest, "ClusterTypeNotSupported", fmt.Sprintf("Cluster type (%s, %s, %s) is not supported by any loaded cluster driver. Loaded drivers support: %s.", serverType, os, coe, s))
}

// ClusterTypeBetaNotEnabled is the 400 for a beta driver not enabled.
func ClusterTypeBetaNotEnabled(serverType, os, coe, driver string) *Error {
	return newCatalogueError(http.StatusBadRequest, "ClusterTypeBetaNotEnabled", fmt.Sprintf("Cluster type (%s, %s, %s) is provided by the '%s' driver, which is a beta driver and is not enabled. Add '%s' to the [drivers]/enabled_beta_drivers configuration option to use it.", serverType, os, coe, driver, driver))
}

// ClusterDriverNotSupported is "Cluster driver (<d>) not supported." (400).
func ClusterDriverNotSupported(driver string) *Error {
	return newCatalogueError(http.StatusBadRequest, "ClusterDriverNotSupported", fmt.Sprintf("Cluster driver (%s) not supported.", driver))
}

// RequiredParameterNotProvided is the 400 for a missing driver parameter.
func RequiredParameterNotProvided(param string) *Error {
	return newCatalogueError(http.StatusBadRequest, "RequiredParameterNotProvided", fmt.Sprintf("Required parameter %s not provided.", param))
}

// OperationInProgress is the 400 for a busy cluster.
func OperationInProgress(clusterName string) *Error {
	return newCatalogueError(http.StatusBadRequest, "OperationInProgress", fmt.Sprintf("Cluster %s already has an operation in progress.", clusterName))
}

// VolumeTypeNotFound is "Valid volume type could not be found." (400).
func VolumeTypeNotFound() *Error {
	return newCatalogueError(http.StatusBadRequest, "VolumeTypeNotFound", "Valid volume type could not be found.")
}

// ImageNotFound is "Image <id> could not be found." (400).
func ImageNotFound(image string) *Error {
	return newCatalogueError(http.StatusBadRequest, "ImageNotFound", fmt.Sprintf("Image %s could not be found.", image))
}

// ImageNotAuthorized is "Not authorized for image <id>." (403).
func ImageNotAuthorized(image string) *Error {
	return newCatalogueError(http.StatusForbidden, "ImageNotAuthorized", fmt.Sprintf("Not authorized for image %s.", image))
}

// OSDistroFieldNotFound is the 400 for an image without os_distro.
func OSDistroFieldNotFound(image string) *Error {
	return newCatalogueError(http.StatusBadRequest, "OSDistroFieldNotFound", fmt.Sprintf("Image %s doesn't contain os_distro field.", image))
}

// X509KeyPairNotFound is "A key pair <k> could not be found." (404).
func X509KeyPairNotFound(kp string) *Error {
	return newCatalogueError(http.StatusNotFound, "X509KeyPairNotFound", fmt.Sprintf("A key pair %s could not be found.", kp))
}

// X509KeyPairAlreadyExists is the 409 for a duplicate x509 key pair.
func X509KeyPairAlreadyExists(uuid string) *Error {
	return newCatalogueError(http.StatusConflict, "X509KeyPairAlreadyExists", fmt.Sprintf("A key pair with UUID %s already exists.", uuid))
}

// CertificateStorageException is "Could not store certificate: <msg>" (500).
func CertificateStorageException(msg string) *Error {
	return newCatalogueError(http.StatusInternalServerError, "CertificateStorageException", "Could not store certificate: "+msg)
}

// CertificateValidationError is "Extension '<ext>' not allowed" (400).
func CertificateValidationError(extension string) *Error {
	return newCatalogueError(http.StatusBadRequest, "CertificateValidationError", fmt.Sprintf("Extension '%s' not allowed", extension))
}

// KeyPairNotFound is "Unable to find keypair <k>." (404).
func KeyPairNotFound(keypair string) *Error {
	return newCatalogueError(http.StatusNotFound, "KeyPairNotFound", fmt.Sprintf("Unable to find keypair %s.", keypair))
}

// MagnumServiceNotFound is the 404 for an unknown service row.
func MagnumServiceNotFound(id string) *Error {
	return newCatalogueError(http.StatusNotFound, "MagnumServiceNotFound", fmt.Sprintf("A magnum service %s could not be found.", id))
}

// MagnumServiceAlreadyExists is the 409 for a duplicate service row.
func MagnumServiceAlreadyExists(id string) *Error {
	return newCatalogueError(http.StatusConflict, "MagnumServiceAlreadyExists", fmt.Sprintf("A magnum service with ID %s already exists.", id))
}

// UnsupportedK8sQuantityFormat is the 400 for a bad Kubernetes quantity.
func UnsupportedK8sQuantityFormat() *Error {
	return newCatalogueError(http.StatusBadRequest, "UnsupportedK8sQuantityFormat", "Unsupported quantity format for k8s cluster.")
}

// FlavorNotFound is "Unable to find flavor <f>." (400).
func FlavorNotFound(flavor string) *Error {
	return newCatalogueError(http.StatusBadRequest, "FlavorNotFound", fmt.Sprintf("Unable to find flavor %s.", flavor))
}

// FixedNetworkNotFound is "Unable to find fixed network <n>." (400).
func FixedNetworkNotFound(network string) *Error {
	return newCatalogueError(http.StatusBadRequest, "FixedNetworkNotFound", fmt.Sprintf("Unable to find fixed network %s.", network))
}

// FixedSubnetNotFound is "Unable to find fixed subnet <s>." (400).
func FixedSubnetNotFound(subnet string) *Error {
	return newCatalogueError(http.StatusBadRequest, "FixedSubnetNotFound", fmt.Sprintf("Unable to find fixed subnet %s.", subnet))
}

// ExternalNetworkNotFound is "Unable to find external network <n>." (400).
func ExternalNetworkNotFound(network string) *Error {
	return newCatalogueError(http.StatusBadRequest, "ExternalNetworkNotFound", fmt.Sprintf("Unable to find external network %s.", network))
}

// QuotaAlreadyExists is the 409 of a duplicate quota.
func QuotaAlreadyExists(projectID, resource string) *Error {
	return newCatalogueError(http.StatusConflict, "QuotaAlreadyExists", fmt.Sprintf("Quota for project %s already exists for resource %s.", projectID, resource))
}

// QuotaNotFound is "Quota could not be found: project_id <p> resource <r>." (404).
func QuotaNotFound(projectID, resource string) *Error {
	return newCatalogueError(http.StatusNotFound, "QuotaNotFound", fmt.Sprintf("Quota could not be found: project_id %s resource %s.", projectID, resource))
}

// QuotaNotFoundByID is the 404 of an unknown quota marker
// ("Quota could not be found: quota id <n> .", with Magnum's space).
func QuotaNotFoundByID(id string) *Error {
	return newCatalogueError(http.StatusNotFound, "QuotaNotFound", fmt.Sprintf("Quota could not be found: quota id %s .", id))
}

// ResourceLimitExceeded is the 403 of the cluster quota.
func ResourceLimitExceeded(limit int) *Error {
	return newCatalogueError(http.StatusForbidden, "ResourceLimitExceeded", fmt.Sprintf("Resource limit exceeded: You have reached the maximum clusters per project, %d. You may delete a cluster to make room for a new one.", limit))
}

// RegionsListFailed is "Failed to list regions." (500).
func RegionsListFailed() *Error {
	return newCatalogueError(http.StatusInternalServerError, "RegionsListFailed", "Failed to list regions.")
}

// ServicesListFailed is "Failed to list services." (500).
func ServicesListFailed() *Error {
	return newCatalogueError(http.StatusInternalServerError, "ServicesListFailed", "Failed to list services.")
}

// CertificatesToClusterFailed is the 500 of a failed CA rotation.
func CertificatesToClusterFailed(clusterUUID string) *Error {
	return newCatalogueError(http.StatusInternalServerError, "CertificatesToClusterFailed", "Failed to create certificates for Cluster: "+clusterUUID)
}

// FederationNotFound is "Federation <ident> could not be found." (404).
func FederationNotFound(ident string) *Error {
	return newCatalogueError(http.StatusNotFound, "FederationNotFound", fmt.Sprintf("Federation %s could not be found.", ident))
}

// FederationAlreadyExists is the 409 for a duplicate federation uuid.
func FederationAlreadyExists(uuid string) *Error {
	return newCatalogueError(http.StatusConflict, "FederationAlreadyExists", fmt.Sprintf("A federation with UUID %s already exists.", uuid))
}

// MemberAlreadyExists is the 409 of a federation join of a member.
func MemberAlreadyExists(uuid, federationName string) *Error {
	return newCatalogueError(http.StatusConflict, "MemberAlreadyExists", fmt.Sprintf("A cluster with UUID %s is already a member of the federation %s.", uuid, federationName))
}

// FederationMemberNotFound is the 404 of a federation unjoin of a non-member
// (raised by Magnum as HTTPNotFound with a literal message).
func FederationMemberNotFound(uuid, federationName string) *Error {
	return newCatalogueError(http.StatusNotFound, "HTTPNotFound", fmt.Sprintf("Cluster %s is not a member of the federation %s.", uuid, federationName))
}

// PreDeletionFailed is the 409 of a failed pre-delete.
func PreDeletionFailed(clusterUUID, msg string) *Error {
	return newCatalogueError(http.StatusConflict, "PreDeletionFailed", fmt.Sprintf("Failed to pre-delete resources for cluster %s, error: %s.", clusterUUID, msg))
}

// NodeGroupAlreadyExists is the 409 of a duplicate nodegroup name; Magnum
// fills the cluster placeholder with the cluster name.
func NodeGroupAlreadyExists(name, clusterName string) *Error {
	return newCatalogueError(http.StatusConflict, "NodeGroupAlreadyExists", fmt.Sprintf("A node group with name %s already exists in the cluster %s.", name, clusterName))
}

// NodeGroupNotFound is "Nodegroup <ident> could not be found." (404).
func NodeGroupNotFound(ident string) *Error {
	return newCatalogueError(http.StatusNotFound, "NodeGroupNotFound", fmt.Sprintf("Nodegroup %s could not be found.", ident))
}

// MasterNGSizeInvalid is the 400 for an even (or < 1) master count.
func MasterNGSizeInvalid(size int) *Error {
	return newCatalogueError(http.StatusBadRequest, "MasterNGSizeInvalid", fmt.Sprintf("master nodegroup size of %d is invalid, size cannot be an even number.", size))
}

// MasterNGResizeNotSupported is the 400 of a master nodegroup resize.
func MasterNGResizeNotSupported() *Error {
	return newCatalogueError(http.StatusBadRequest, "MasterNGResizeNotSupported", "Resizing the master nodegroup is not supported by this driver.")
}

// ZeroNodeCountNotSupported is the 400 of a zero node count below 1.10.
func ZeroNodeCountNotSupported() *Error {
	return newCatalogueError(http.StatusBadRequest, "ZeroNodeCountNotSupported", "Resizing a nodegroup to zero is not supported in the provided microversion.")
}

// FlavorZeroRootVolumeNotSupported is the 400 of the root-disk check.
func FlavorZeroRootVolumeNotSupported() *Error {
	return newCatalogueError(http.StatusBadRequest, "FlavorZeroRootVolumeNotSupported", "Flavor with zero root volume size is not supported when boot_volume_size is zero.")
}

// ClusterUpgradeNotSupported is the 400 of an upgrade at 1.7.
func ClusterUpgradeNotSupported() *Error {
	return newCatalogueError(http.StatusBadRequest, "ClusterUpgradeNotSupported", "Cluster upgrade is not supported in the provided microversion.")
}

// NGResizeOutBounds is the 400 of a resize outside min/max; max nil renders
// as Python's None.
func NGResizeOutBounds(nodegroup string, minCount int, maxCount *int) *Error {
	mx := "None"
	if maxCount != nil {
		mx = strconv.Itoa(*maxCount)
	}
	return newCatalogueError(http.StatusBadRequest, "NGResizeOutBounds", fmt.Sprintf("Resizing %s outside the allowed range: min_node_count = %d, max_node_count = %s", nodegroup, minCount, mx))
}

// DeletingDefaultNGNotSupported is the 400 of a default nodegroup DELETE.
func DeletingDefaultNGNotSupported() *Error {
	return newCatalogueError(http.StatusBadRequest, "DeletingDefaultNGNotSupported", "Deleting a default nodegroup is not supported.")
}

// NodeGroupInvalidInput is the 409 "<attr> for <ng> is invalid (<expl>)."
func NodeGroupInvalidInput(attr, nodegroup, expl string) *Error {
	return newCatalogueError(http.StatusConflict, "NodeGroupInvalidInput", fmt.Sprintf("%s for %s is invalid (%s).", attr, nodegroup, expl))
}

// CreateMasterNodeGroup is the 400 of a master nodegroup POST.
func CreateMasterNodeGroup() *Error {
	return newCatalogueError(http.StatusBadRequest, "CreateMasterNodeGroup", "Creating master nodegroups is currently not supported.")
}

// NgOperationInProgress is the 400 for a busy nodegroup.
func NgOperationInProgress(nodegroup string) *Error {
	return newCatalogueError(http.StatusBadRequest, "NgOperationInProgress", fmt.Sprintf("Nodegroup %s already has an operation in progress.", nodegroup))
}

// InvalidClusterTemplateForUpgrade is the 409 of an invalid upgrade target.
func InvalidClusterTemplateForUpgrade(reason string) *Error {
	return newCatalogueError(http.StatusConflict, "InvalidClusterTemplateForUpgrade", "Cluster Template is not valid for upgrade: "+reason)
}

// NodeGroupUpgradeTemplateMismatch is InvalidClusterTemplateForUpgrade for a
// non-default nodegroup asked to move to another template.
func NodeGroupUpgradeTemplateMismatch(nodegroup, templateName string) *Error {
	return InvalidClusterTemplateForUpgrade(fmt.Sprintf("Nodegroup %s can be upgraded only to match cluster's template (%s).", nodegroup, templateName))
}

// ClusterAPIAddressUnavailable is the 409 of a nodegroup POST on a cluster
// without API address.
func ClusterAPIAddressUnavailable() *Error {
	return newCatalogueError(http.StatusConflict, "ClusterAPIAddressUnavailable", "Cluster API address is not available yet")
}

// ---- observed literal messages ----

// MultipleClusters is the 409 of an ambiguous cluster name.
func MultipleClusters() *Error {
	return Conflict("Multiple clusters exist with same name. Please use the cluster uuid instead.")
}

// MultipleClusterTemplates is the 409 of an ambiguous template name.
func MultipleClusterTemplates() *Error {
	return Conflict("Multiple ClusterTemplates exist with same name. Please use the ClusterTemplate uuid instead.")
}

// MultipleNodeGroups is the 409 of an ambiguous nodegroup name.
func MultipleNodeGroups() *Error {
	return Conflict("Multiple nodegroups exist with same name. Please use the nodegroup uuid instead.")
}

// MultipleFederations is the 409 of an ambiguous federation name.
func MultipleFederations() *Error {
	return Conflict("Multiple federations exist with same name. Please use the federation uuid instead.")
}

// MultipleOpenStackResources is the 409 of an ambiguous OpenStack resource
// name; kind is "external networks", "networks", "subnets" or "images" and
// idName the matching "external network", "network", "subnet", "image".
func MultipleOpenStackResources(kind, name, idName string) *Error {
	return Conflict(fmt.Sprintf("Multiple %s exist with same name '%s'. Please use the %s ID instead.", kind, name, idName))
}

// CannotChangeProperties is the 400 "cannot change <resource> property(ies)
// <f1>, <f2>." (resource is "cluster" or "federation").
func CannotChangeProperties(resource string, fields []string) *Error {
	return InvalidParameterValue(fmt.Sprintf("cannot change %s property(ies) %s.", resource, strings.Join(fields, ", ")))
}

// UnsupportedCOE is "Requested COE type <coe> is not supported." (400);
// an absent COE is reported as "Unset".
func UnsupportedCOE(coe string) *Error {
	return InvalidParameterValue(fmt.Sprintf("Requested COE type %s is not supported.", coe))
}

// NetworkDriverNotSupported is the 400 of a driver outside the supported list.
func NetworkDriverNotSupported(driver string, supported []string) *Error {
	return InvalidParameterValue(fmt.Sprintf("Network driver type %s is not supported, expecting a %s network driver.", driver, strings.Join(append(append([]string(nil), supported...), "unspecified"), "/")))
}

// NetworkDriverNotAllowed is the 400 of a driver outside the allowed list
// (note Magnum's trailing space).
func NetworkDriverNotAllowed(driver string, allowed []string) *Error {
	return InvalidParameterValue(fmt.Sprintf("Network driver type %s is not allowed, expecting a %s network driver. ", driver, strings.Join(append(append([]string(nil), allowed...), "unspecified"), "/")))
}

// VolumeDriverNotSupported is the 400 of an unsupported volume driver.
func VolumeDriverNotSupported(driver string, supported []string) *Error {
	return InvalidParameterValue(fmt.Sprintf("Volume driver type %s is not supported, expecting a %s volume driver.", driver, strings.Join(append(append([]string(nil), supported...), "unspecified"), "/")))
}

// ServerTypeNotSupported is the 400 of an unsupported server type.
func ServerTypeNotSupported(serverType string, supported []string) *Error {
	return InvalidParameterValue(fmt.Sprintf("Server type %s is not supported, expecting a %s server type.", serverType, strings.Join(append(append([]string(nil), supported...), "unspecified"), "/")))
}

// DevicemapperVolumeSize is the 400 of a too small devicemapper volume; nil
// renders as Python's None.
func DevicemapperVolumeSize(size *int) *Error {
	s := "None"
	if size != nil {
		s = strconv.Itoa(*size)
	}
	return InvalidParameterValue(fmt.Sprintf("docker volume size %s GB is not valid, expecting minimum value 3GB for devicemapper storage driver.", s))
}

// MasterCountWithoutLB is the 400 of master_count > 1 without a load balancer.
func MasterCountWithoutLB() *Error {
	return InvalidParameterValue("master_count must be 1 when master_lb_enabled is False")
}

// QuotaProjectMissing is "Must provide a valid project ID." (400).
func QuotaProjectMissing() *Error {
	return InvalidParameterValue("Must provide a valid project ID.")
}

// InvalidStatsType is the 400 of an unknown stats type.
func InvalidStatsType() *Error {
	return InvalidParameterValue("Invalid stats type. Allowed values are 'cluster'")
}

// RotateCANonTLS is the 400 of a CA rotation on a TLS-less cluster.
func RotateCANonTLS() *Error {
	return InvalidParameterValue("Rotating the CA certificate on a non-TLS cluster is not supported")
}

// FederationNoHostCluster is the 400 of a federation without host cluster.
func FederationNoHostCluster() *Error {
	return InvalidParameterValue("No hostcluster specified. Please specify a hostcluster_id.")
}

// FederationNoProperties is the 400 of a federation without properties.
func FederationNoProperties() *Error {
	return InvalidParameterValue("Please specify a `properties` dict for the federation.")
}

// FederationNoDNSZone is the 400 of a federation without dns-zone.
func FederationNoDNSZone() *Error {
	return InvalidParameterValue("No DNS zone specified. Please specify a `dns-zone`.")
}

// UpgradeStatusNotSupported is the conductor's 400 for an upgrade in a
// non-complete status.
func UpgradeStatusNotSupported(status Status) *Error {
	return NotSupported(fmt.Sprintf("Upgrading a cluster when status is \"%s\"", status))
}

// UpdateStatusNotSupported is the conductor's 400 for a CA rotation in a
// non-complete status.
func UpdateStatusNotSupported(status Status) *Error {
	return NotSupported(fmt.Sprintf("Updating a cluster when status is \"%s\"", status))
}

// CredentialRotationStatusNotSupported is the conductor's 400 for a
// credential rotation in a refused status (the module path really is part of
// Magnum's message).
func CredentialRotationStatusNotSupported(status Status) *Error {
	return NotSupported(fmt.Sprintf("magnum.conductor.handlers.credential_conductor when cluster status is \"%s\"", status))
}

// CredentialRotationNotSupportedByDriver is the 400 of a driver without
// credential rotation.
func CredentialRotationNotSupportedByDriver() *Error {
	return NotSupportedMessage("Credential rotation is not supported by driver.")
}

// RotateCANotSupportedByDriver is the 400 of a driver without CA rotation.
func RotateCANotSupportedByDriver() *Error {
	return NotSupportedMessage("'rotate_ca_certificate' is not supported by this driver.")
}

// StateGuardConflict is the synchronous 409 returned where Magnum's
// conductor would silently drop an update or resize (pack §3.4).
//
// Deviation: Magnum answers 202 and drops the operation in the conductor.
func StateGuardConflict(operation string, status Status) *Error {
	return newCatalogueError(http.StatusConflict, "NotSupported", fmt.Sprintf("%s a cluster when status is \"%s\" is not supported.", operation, status))
}

// ---- pagination (WSME ClientSideError) ----

// LimitNotPositive is "Limit must be positive" (400).
func LimitNotPositive() *Error {
	return newCatalogueError(http.StatusBadRequest, "ClientSideError", "Limit must be positive")
}

// InvalidSortDir is the 400 of a bad sort_dir.
func InvalidSortDir(dir string) *Error {
	return newCatalogueError(http.StatusBadRequest, "ClientSideError", fmt.Sprintf("Invalid sort direction: %s. Acceptable values are 'asc' or 'desc'", dir))
}

// InvalidSortKey is the 400 of a bad sort_key.
func InvalidSortKey(key string) *Error {
	return newCatalogueError(http.StatusBadRequest, "InvalidParameterValue", fmt.Sprintf("The sort_key value \"%s\" is an invalid field for sorting", key))
}

// ---- WSME argument and attribute errors ----

// InvalidInput is WSME's "Invalid input for field/attribute <f>. Value:
// '<v>'. <reason>" (400); value is rendered with Python's str().
func InvalidInput(field string, value any, reason string) *Error {
	return newCatalogueError(http.StatusBadRequest, "InvalidInput", fmt.Sprintf("Invalid input for field/attribute %s. Value: '%s'. %s", field, PyStr(value), reason))
}

// InvalidInputRaw is InvalidInput with a value already rendered.
func InvalidInputRaw(field, value, reason string) *Error {
	return newCatalogueError(http.StatusBadRequest, "InvalidInput", fmt.Sprintf("Invalid input for field/attribute %s. Value: '%s'. %s", field, value, reason))
}

// ReadOnlyField is the 400 for a read-only attribute sent in a body.
func ReadOnlyField(field string, value any) *Error {
	return InvalidInput(field, value, "Cannot set read only field.")
}

// MandatoryFieldMissing is the 400 for an absent mandatory attribute.
func MandatoryFieldMissing(field string) *Error {
	return InvalidInput(field, nil, "Mandatory field missing.")
}

// InvalidEnum is the 400 for a value outside an enum.
func InvalidEnum(field string, value any, allowed []string) *Error {
	return InvalidInput(field, value, "Value should be one of: "+strings.Join(allowed, ", "))
}

// PatternMismatch is the 400 for a string not matching its pattern.
func PatternMismatch(field string, value any, pattern string) *Error {
	return InvalidInput(field, value, "Value should match the pattern "+pattern)
}

// TooLong is the 400 for a string above its maximum length.
func TooLong(field string, value any, max int) *Error {
	return InvalidInput(field, value, fmt.Sprintf("Value should have a maximum character requirement of %d", max))
}

// TooShort is the 400 for a string below its minimum length.
func TooShort(field string, value any, min int) *Error {
	return InvalidInput(field, value, fmt.Sprintf("Value should have a minimum character requirement of %d", min))
}

// BelowMinimum is the 400 for an integer below its minimum.
func BelowMinimum(field string, value any, min int) *Error {
	return InvalidInput(field, value, fmt.Sprintf("Value should be greater or equal to %d", min))
}

// AboveMaximum is the 400 for an integer above its maximum.
func AboveMaximum(field string, value any, max int) *Error {
	return InvalidInput(field, value, fmt.Sprintf("Value should be lower or equal to %d", max))
}

// NotAString is the 400 for a non-string where a string is required.
func NotAString(field string, value any) *Error {
	return InvalidInput(field, value, "Value should be string")
}

// WrongType is WSME's "Wrong type. Expected '<expected>', got '<class 'x'>'"
// reason wrapped in InvalidInput; expected is Python's rendering of the type
// (e.g. "<class 'str'>").
func WrongType(field string, value any, expected string) *Error {
	return InvalidInput(field, value, fmt.Sprintf("Wrong type. Expected '%s', got '%s'", expected, PyClass(value)))
}

// NotAValidList is the 400 for a non-list where a list is required.
func NotAValidList(field string, value any) *Error {
	return InvalidInput(field, value, "Value not a valid list: "+PyStr(value))
}

// NotAValidDict is the 400 for a non-dict where a dict is required.
func NotAValidDict(field string, value any) *Error {
	return InvalidInput(field, value, "Value not a valid dict: "+PyStr(value))
}

// InvalidIntLiteral is the 400 of int() on a non-numeric string; WSME names
// the body argument and shows the whole body.
func InvalidIntLiteral(arg string, body any, v string) *Error {
	return InvalidInput(arg, body, IntLiteralError(v))
}

// InvalidQueryInt is the 400 of a non-integer query parameter.
func InvalidQueryInt(field, v string) *Error {
	return InvalidInput(field, v, "unable to convert to int. Error: "+IntLiteralError(v))
}

// IntLiteralError is Python's ValueError text for int(v) on a string that
// is not an integer. CPython formats the value with %.200R: its repr cut to
// 200 characters (so a long value loses its closing quote).
func IntLiteralError(v string) string {
	r := []rune(PyRepr(v))
	if len(r) > 200 {
		r = r[:200]
	}
	return "invalid literal for int() with base 10: " + string(r)
}

// InvalidMarker is the 400 of a marker that is not a UUID.
func InvalidMarker(v string) *Error {
	return InvalidInput("marker", v, fmt.Sprintf("unable to convert to uuid. Error: Expected a uuid but received %s.", v))
}

// UnknownArgument is `Unknown argument: "<name>"` (400).
func UnknownArgument(name string) *Error {
	return newCatalogueError(http.StatusBadRequest, "UnknownArgument", fmt.Sprintf("Unknown argument: \"%s\"", name))
}

// MissingArgument is `Missing argument: "<name>"` (400).
func MissingArgument(name string) *Error {
	return newCatalogueError(http.StatusBadRequest, "MissingArgument", fmt.Sprintf("Missing argument: \"%s\"", name))
}

// UnknownAttribute is WSME's unknown-attribute 400 ("Unknown attribute for
// argument <arg>: <f>", plural with several names). Magnum lists them in
// Python set order; the names are given here in the caller's order.
func UnknownAttribute(arg string, attrs []string) *Error {
	f := "Unknown attribute for argument %s: %s"
	if len(attrs) > 1 {
		f = "Unknown attributes for argument %s: %s"
	}
	return newCatalogueError(http.StatusBadRequest, "UnknownAttribute", fmt.Sprintf(f, arg, strings.Join(attrs, ", ")))
}

// InvalidJSONBody is "Request is not in valid JSON format" (400).
func InvalidJSONBody() *Error {
	return newCatalogueError(http.StatusBadRequest, "ClientSideError", "Request is not in valid JSON format")
}

// UnknownMimetype is the 415 for an unsupported Content-Type.
func UnknownMimetype(mimetype string) *Error {
	return newCatalogueError(http.StatusUnsupportedMediaType, "ClientSideError", "Unknown mimetype: "+mimetype)
}

// WithStatus returns a copy of e with another status, for Magnum's per-call
// overrides (ClusterTemplateNotFound → 400 on cluster POST below 1.10,
// ClusterNotFound → 400 in a certificate POST).
func (e *Error) WithStatus(status int) *Error {
	c := *e
	c.Status = status
	return &c
}

// ---- Python rendering of values ----

// PyReprer is implemented by values with a Python representation that the
// JSON-like Go types cannot express (tuples, sets, ordered dicts, bytes).
type PyReprer interface {
	PyRepr() string
}

// PyStr renders v as Python's str(): strings unquoted, everything else as
// PyRepr. JSON values map to Python as json.loads would produce them.
func PyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return PyRepr(v)
}

// PyRepr renders v as Python's repr(). Go maps (JSON objects, whose order is
// lost) are rendered with sorted keys.
func PyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case PyReprer:
		return x.PyRepr()
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case *big.Int:
		return x.String()
	case float64:
		return PyFloatRepr(x)
	case complex128:
		return pyComplexRepr(x)
	case string:
		return PyStringRepr(x)
	case []string:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = PyStringRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = PyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]string:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = PyStringRepr(k) + ": " + PyStringRepr(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = PyStringRepr(k) + ": " + PyRepr(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

// PyClass renders the Python class of v as str(type(v)) does.
func PyClass(v any) string {
	name := "object"
	switch v.(type) {
	case nil:
		name = "NoneType"
	case bool:
		name = "bool"
	case int, int64, *big.Int:
		name = "int"
	case float64:
		name = "float"
	case complex128:
		name = "complex"
	case string:
		name = "str"
	case []any, []string:
		name = "list"
	case map[string]any, map[string]string:
		name = "dict"
	case interface{ PyClass() string }:
		name = v.(interface{ PyClass() string }).PyClass()
	}
	return "<class '" + name + "'>"
}

// PyFloatRepr renders f as Python's repr(float): the shortest round-trip
// digits, fixed notation for exponents in [-4, 16), ".0" for integral values.
func PyFloatRepr(f float64) string {
	return pyFloat(f, true)
}

func pyFloat(f float64, dotZero bool) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	mant, expS, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expS)
	digits := strings.Replace(mant, ".", "", 1)
	if exp >= -4 && exp < 16 {
		var out string
		if exp >= 0 {
			if len(digits) <= exp+1 {
				out = digits + strings.Repeat("0", exp+1-len(digits))
				if dotZero {
					out += ".0"
				}
			} else {
				out = digits[:exp+1] + "." + digits[exp+1:]
			}
		} else {
			out = "0." + strings.Repeat("0", -exp-1) + digits
		}
		return sign + out
	}
	m := digits[:1]
	if len(digits) > 1 {
		m += "." + digits[1:]
	}
	es := "+"
	if exp < 0 {
		es, exp = "-", -exp
	}
	return fmt.Sprintf("%s%se%s%02d", sign, m, es, exp)
}

func pyComplexRepr(c complex128) string {
	re, im := real(c), imag(c)
	imS := pyFloat(im, false) + "j"
	if re == 0 && !math.Signbit(re) {
		return imS
	}
	sep := "+"
	if math.Signbit(im) || math.IsNaN(im) && strings.HasPrefix(imS, "-") {
		sep = ""
	}
	return "(" + pyFloat(re, false) + sep + imS + ")"
}

// PyStringRepr renders s as Python's repr(str).
func PyStringRepr(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			// Not valid UTF-8: show the byte as a surrogate escape.
			fmt.Fprintf(&b, `\udc%02x`, s[i])
			i++
			continue
		}
		i += size
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(q):
			b.WriteByte('\\')
			b.WriteByte(q)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x7f:
			b.WriteRune(r)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// PyBytesRepr renders s as Python's repr(bytes).
func PyBytesRepr(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	var b strings.Builder
	b.WriteString("b")
	b.WriteByte(q)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c == q:
			b.WriteByte('\\')
			b.WriteByte(q)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// ---- JSON patch (magnum/api/controllers/v1/types.py, magnum/api/utils.py) ----

// PatchInternalAttribute is the 400 for patching an internal attribute.
func PatchInternalAttribute(path string) *Error {
	return newCatalogueError(http.StatusBadRequest, "ClientSideError", fmt.Sprintf("'%s' is an internal attribute and can not be updated", path))
}

// PatchMandatoryAttribute is the 400 for removing a non-removable attribute.
func PatchMandatoryAttribute(path string) *Error {
	return newCatalogueError(http.StatusBadRequest, "ClientSideError", fmt.Sprintf("'%s' is a mandatory attribute and can not be removed", path))
}

// PatchValueMissing is the 400 for add/replace without a value.
func PatchValueMissing() *Error {
	return newCatalogueError(http.StatusBadRequest, "ClientSideError", "'add' and 'replace' operations needs value")
}

// PatchAddNewAttribute is the 400 for adding an unknown top-level attribute.
func PatchAddNewAttribute(path string) *Error {
	return newCatalogueError(http.StatusBadRequest, "ClientSideError", fmt.Sprintf("Adding a new attribute %s to the root of the resource is not allowed.", path))
}

// PatchAttributeExists is the 400 for adding an attribute that is set.
func PatchAttributeExists(path string) *Error {
	return newCatalogueError(http.StatusBadRequest, "ClientSideError", fmt.Sprintf("The attribute %s has existed, please use 'replace' operation instead.", path))
}

// ServerError is bad input that Magnum does not validate: a Python
// exception escapes WSME's client-error handling and Magnum answers 500 with
// str(exception) as the message.
//
// Deviation: the message is kept but the status is 400 (code "client"): bad
// input is the client's error and never a 500 (docs/compatibility.md).
func ServerError(msg string) *Error {
	return newCatalogueError(http.StatusBadRequest, "ServerError", msg)
}
