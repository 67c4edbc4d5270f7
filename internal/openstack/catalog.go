package openstack

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// catalogEndpoint is one endpoint of a catalog entry. Keystone v3 lists one
// object per interface; the v2 format lists one object per region with a
// URL field per interface.
type catalogEndpoint struct {
	Interface string `json:"interface"`
	Region    string `json:"region"`
	RegionID  string `json:"region_id"`
	URL       string `json:"url"`

	PublicURL   string `json:"publicURL"`
	InternalURL string `json:"internalURL"`
	AdminURL    string `json:"adminURL"`
}

type catalogEntry struct {
	Type      string            `json:"type"`
	Name      string            `json:"name"`
	Endpoints []catalogEndpoint `json:"endpoints"`
}

// parseCatalog accepts the forms a token's catalog travels in: the bare
// array (keystonemiddleware's X-Service-Catalog header), {"catalog": [...]},
// a whole token body {"token": {"catalog": [...]}}, and the v2
// {"serviceCatalog": [...]} / {"access": {"serviceCatalog": [...]}}.
func parseCatalog(raw []byte) ([]catalogEntry, error) {
	raw = []byte(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '[' {
		var entries []catalogEntry
		if err := json.Unmarshal(raw, &entries); err != nil {
			return nil, fmt.Errorf("decode service catalog: %w", err)
		}
		return entries, nil
	}
	var wrapped struct {
		Catalog        []catalogEntry `json:"catalog"`
		ServiceCatalog []catalogEntry `json:"serviceCatalog"`
		Token          *struct {
			Catalog []catalogEntry `json:"catalog"`
		} `json:"token"`
		Access *struct {
			ServiceCatalog []catalogEntry `json:"serviceCatalog"`
		} `json:"access"`
	}
	if err := json.Unmarshal(raw, &wrapped); err != nil {
		return nil, fmt.Errorf("decode service catalog: %w", err)
	}
	switch {
	case wrapped.Token != nil:
		return wrapped.Token.Catalog, nil
	case wrapped.Access != nil:
		return wrapped.Access.ServiceCatalog, nil
	case wrapped.Catalog != nil:
		return wrapped.Catalog, nil
	default:
		return wrapped.ServiceCatalog, nil
	}
}

// normalizeInterface maps the oslo endpoint_type spellings (publicURL,
// internalURL, adminURL) to Keystone v3 interfaces; "" means public.
func normalizeInterface(endpointType string) string {
	s := strings.TrimSuffix(endpointType, "URL")
	if s == "" {
		return "public"
	}
	return s
}

// errEndpointNotFound carries keystoneauth's message, which Magnum puts in
// its AuthorizationFailure text.
type errEndpointNotFound struct{ msg string }

func (e *errEndpointNotFound) Error() string { return e.msg }

// endpointURL picks the first endpoint of serviceType with the interface
// and (when set) region, in catalog order, as keystoneauth's
// ServiceCatalog.endpoint_data_for does. The error texts are keystoneauth's
// (keystoneauth1/access/service_catalog.py), with the interface spelled as
// configured.
func endpointURL(entries []catalogEntry, serviceType, endpointType, region string) (string, error) {
	if len(entries) == 0 {
		return "", &errEndpointNotFound{"The service catalog is empty."}
	}
	iface := normalizeInterface(endpointType)
	for _, e := range entries {
		if e.Type != serviceType {
			continue
		}
		for _, ep := range e.Endpoints {
			if region != "" && ep.Region != region && ep.RegionID != region {
				continue
			}
			u := ep.URL
			if ep.Interface == "" { // v2 catalog
				switch iface {
				case "public":
					u = ep.PublicURL
				case "internal":
					u = ep.InternalURL
				case "admin":
					u = ep.AdminURL
				}
			} else if normalizeInterface(ep.Interface) != iface {
				continue
			}
			if u != "" {
				return u, nil
			}
		}
	}
	if endpointType == "" {
		endpointType = "publicURL" // Magnum's default endpoint_type
	}
	if region != "" {
		return "", &errEndpointNotFound{fmt.Sprintf("%s endpoint for %s service in %s region not found", endpointType, serviceType, region)}
	}
	return "", &errEndpointNotFound{fmt.Sprintf("%s endpoint for %s service not found", endpointType, serviceType)}
}

// versionSegment matches the API version part of an endpoint path.
var versionSegment = regexp.MustCompile(`^v\d+(\.\d+)?$`)

// serviceRoots derives the unversioned root (where Glance's relative next
// links start) and the versioned resource base of a service from a catalog
// or configured URL. Glance and Neutron are usually listed without a version
// ("http://glance:9292"), Nova with one ("http://nova:8774/v2.1", possibly
// followed by a project ID). want is the version appended when the URL has
// none: "v2" for Glance, "v2.1" for Nova, "v2.0" for Neutron.
func serviceRoots(raw, want string) (root, base string, err error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", "", fmt.Errorf("endpoint %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", "", errors.New("endpoint " + raw + " is not an http(s) URL")
	}
	u.RawQuery, u.Fragment = "", ""
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(segs) == 1 && segs[0] == "" {
		segs = nil
	}
	for i, s := range segs {
		if versionSegment.MatchString(s) {
			rootURL := *u
			rootURL.Path = "/" + strings.Join(segs[:i], "/")
			rootURL.RawPath = ""
			baseURL := *u
			baseURL.Path = "/" + strings.Join(segs, "/")
			baseURL.RawPath = ""
			return withSlash(rootURL.String()), withSlash(baseURL.String()), nil
		}
	}
	u.Path = "/" + strings.Join(segs, "/")
	u.RawPath = ""
	root = withSlash(u.String())
	return root, root + want + "/", nil
}

func withSlash(s string) string {
	if strings.HasSuffix(s, "/") {
		return s
	}
	return s + "/"
}

// endpointCache remembers the endpoints resolved from service catalogs:
// every request of a token carries the same catalog, and decoding it for
// each OpenStack call of a request showed in the profile of cluster
// creates. Only successful resolutions are kept. The zero value is ready;
// it is safe for concurrent use and holds at most endpointCacheSize
// catalogs (it starts over when full).
type endpointCache struct {
	mu sync.Mutex
	m  map[string]map[endpointKey]string
}

type endpointKey struct{ serviceType, endpointType, region string }

const endpointCacheSize = 256

// resolve is parseCatalog + endpointURL through the cache.
func (c *endpointCache) resolve(raw []byte, serviceType, endpointType, region string) (string, error) {
	k := endpointKey{serviceType, endpointType, region}
	c.mu.Lock()
	ep, ok := c.m[string(raw)][k]
	c.mu.Unlock()
	if ok {
		return ep, nil
	}
	entries, err := parseCatalog(raw)
	if err != nil {
		return "", err
	}
	ep, err = endpointURL(entries, serviceType, endpointType, region)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= endpointCacheSize {
		c.m = map[string]map[endpointKey]string{}
	}
	byKey := c.m[string(raw)]
	if byKey == nil {
		byKey = map[endpointKey]string{}
		c.m[string(raw)] = byKey
	}
	byKey[k] = ep
	return ep, nil
}
