package openstack

import (
	"net/http"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// Client-visible errors of the lookups, with Magnum's statuses and messages
// (magnum/common/exception.py and magnum/api/attr_validator.py). Kind is the
// Magnum exception class, so callers can use errors.Is with
// &magnum.Error{Kind: "ImageNotFound"}.
//
// These constructors belong in the domain's error catalogue; they live here
// until the catalogue has them.

// ImageNotFound is Magnum's ImageNotFound (400).
func ImageNotFound(image string) *magnum.Error {
	return magnum.NewError(http.StatusBadRequest, "ImageNotFound", "Image %s could not be found.", image)
}

// ImageNotAuthorized is Magnum's ImageNotAuthorized (403).
func ImageNotAuthorized(image string) *magnum.Error {
	return magnum.NewError(http.StatusForbidden, "ImageNotAuthorized", "Not authorized for image %s.", image)
}

// OSDistroFieldNotFound is Magnum's OSDistroFieldNotFound (400).
func OSDistroFieldNotFound(image string) *magnum.Error {
	return magnum.NewError(http.StatusBadRequest, "OSDistroFieldNotFound", "Image %s doesn't contain os_distro field.", image)
}

// FlavorNotFound is Magnum's FlavorNotFound (400).
func FlavorNotFound(flavor string) *magnum.Error {
	return magnum.NewError(http.StatusBadRequest, "FlavorNotFound", "Unable to find flavor %s.", flavor)
}

// FlavorZeroRootVolumeNotSupported is Magnum's exception of the same name
// (400), raised when boot_volume_size is 0 and the flavor's disk is 0.
func FlavorZeroRootVolumeNotSupported() *magnum.Error {
	return magnum.NewError(http.StatusBadRequest, "FlavorZeroRootVolumeNotSupported",
		"Flavor with zero root volume size is not supported when boot_volume_size is zero.")
}

// KeyPairNotFound is Magnum's KeyPairNotFound (404).
func KeyPairNotFound(keypair string) *magnum.Error {
	return magnum.NewError(http.StatusNotFound, "KeyPairNotFound", "Unable to find keypair %s.", keypair)
}

// ExternalNetworkNotFound is Magnum's ExternalNetworkNotFound (400).
func ExternalNetworkNotFound(network string) *magnum.Error {
	return magnum.NewError(http.StatusBadRequest, "ExternalNetworkNotFound", "Unable to find external network %s.", network)
}

// FixedNetworkNotFound is Magnum's FixedNetworkNotFound (400).
func FixedNetworkNotFound(network string) *magnum.Error {
	return magnum.NewError(http.StatusBadRequest, "FixedNetworkNotFound", "Unable to find fixed network %s.", network)
}

// FixedSubnetNotFound is Magnum's FixedSubnetNotFound (400).
func FixedSubnetNotFound(subnet string) *magnum.Error {
	return magnum.NewError(http.StatusBadRequest, "FixedSubnetNotFound", "Unable to find fixed subnet %s.", subnet)
}

// AuthorizationFailure is Magnum's AuthorizationFailure (403), raised when
// a client for another service cannot be built (no token, no endpoint in
// the catalog). client is the client's name in Magnum: "glance", "nova",
// "neutron" or "keystone".
func AuthorizationFailure(client, message string) *magnum.Error {
	return magnum.NewError(http.StatusForbidden, "AuthorizationFailure", "%s connection failed. %s", client, message)
}

// The 409s of the validators carry literal messages (Magnum's Conflict with
// a message argument).

func imageConflict(image string) *magnum.Error {
	return magnum.NewError(http.StatusConflict, "Conflict",
		"Multiple images exist with same name '%s'. Please use the image ID instead.", image)
}

func externalNetworkConflict(network string) *magnum.Error {
	return magnum.NewError(http.StatusConflict, "Conflict",
		"Multiple external networks exist with same name '%s'. Please use the external network ID instead.", network)
}

func fixedNetworkConflict(network string) *magnum.Error {
	return magnum.NewError(http.StatusConflict, "Conflict",
		"Multiple networks exist with same name '%s'. Please use the network ID instead.", network)
}

func fixedSubnetConflict(subnet string) *magnum.Error {
	return magnum.NewError(http.StatusConflict, "Conflict",
		"Multiple subnets exist with same name '%s'. Please use the subnet ID instead.", subnet)
}
