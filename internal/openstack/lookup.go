package openstack

import (
	"regexp"
	"strings"
)

// Image is what the API needs of a Glance image.
type Image struct {
	ID   string
	Name string
	// OSDistro is the os_distro property ("" when absent or null).
	OSDistro string
	// MagnumDriver is the magnum_driver property ("" when absent).
	MagnumDriver string
	// Properties holds every string-valued top-level attribute of the image
	// (Glance v2 puts custom properties there), os_distro included.
	Properties map[string]string
}

// Flavor is what the API needs of a Nova flavor.
type Flavor struct {
	ID    string
	Name  string
	VCPUs int
	RAM   int // MiB
	Disk  int // GiB; 0 is refused when boot_volume_size is 0
}

// Keypair is a Nova keypair of the caller.
type Keypair struct {
	Name        string
	Type        string
	Fingerprint string
}

// Network is a Neutron network.
type Network struct {
	ID       string
	Name     string
	External bool
}

// Subnet is a Neutron subnet.
type Subnet struct {
	ID        string
	Name      string
	NetworkID string
}

// maxPages bounds the pages read for one lookup, so that a service that
// keeps answering with next links cannot hold a request forever.
const maxPages = 50

// Lookup finds OpenStack resources by name or ID as the caller of the
// context (magnum.FromContext), with Magnum's matching rules and errors.
// Unexpected failures (5xx answers, timeouts, undecodable bodies) are
// returned as plain wrapped errors, which the API renders as 500, as
// Magnum does. It is safe for concurrent use.
//
// Requests per lookup, compared with Magnum's validators:
//
//   - Image: GET /v2/images/{x} when x is a UUID; when that is 404, 400
//     or 403, or x is a name, GET /v2/images?name=x (openstacksdk's
//     find_image makes the same calls, the first even for a name).
//   - Flavor: GET /flavors/{x}; when that is 404 or 400, GET /flavors/detail
//     page by page until the first flavor named x. Nova has no name filter
//     on its flavor list, so a name costs a listing (Magnum lists every
//     flavor for every check, even for an ID).
//   - Keypair: GET /os-keypairs/{x}.
//   - Networks and subnets: GET /v2.0/networks?name=x (with
//     router:external=true for the external network), plus ?id=x when x is
//     a UUID; Magnum lists every network or subnet instead.
type Lookup struct {
	clients *Clients
}

// NewLookup returns a Lookup calling OpenStack through clients.
func NewLookup(clients *Clients) *Lookup {
	return &Lookup{clients: clients}
}

// canonicalUUID matches the form OpenStack services generate. An ID filter
// is only sent for such values: nothing else can be a Neutron ID, and a
// case-insensitive database collation must not turn an upper-case value
// into a match that Magnum's exact comparison would not make.
var canonicalUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// uuidLike reports whether s parses as a UUID the way Python's
// uuid.UUID (and so oslo's is_uuid_like) accepts it: optional "urn:uuid:"
// prefix, braces and hyphens, 32 hexadecimal digits in any case.
func uuidLike(s string) bool {
	s = strings.ReplaceAll(s, "urn:", "")
	s = strings.ReplaceAll(s, "uuid:", "")
	s = strings.Trim(s, "{}")
	s = strings.ReplaceAll(s, "-", "")
	if len(s) != 32 {
		return false
	}
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F') {
			return false
		}
	}
	return true
}

// pathSafe reports whether ident can be put in a URL path as one segment
// without changing which resource the path names.
func pathSafe(ident string) bool {
	return ident != "" && ident != "." && ident != ".."
}
