package api

import (
	"net/http"
	"strconv"

	"github.com/openkeel/openkeel-magnum/internal/api/microversion"
)

// Link is Magnum's link object.
type Link struct {
	Href string `json:"href"`
	Rel  string `json:"rel"`
	Type string `json:"type,omitempty"`
}

// MakeLink builds a link the way magnum/api/controllers/link.py does:
// "<base>/v1/<resource>/<args>" or, for a bookmark, "<base>/<resource>/<args>";
// args starting with "?" are appended without a slash.
func MakeLink(rel, base, resource, args string, bookmark bool) Link {
	href := base + "/v1/" + resource
	if bookmark {
		href = base + "/" + resource
	}
	if len(args) > 0 && args[0] == '?' {
		href += args
	} else {
		href += "/" + args
	}
	return Link{Href: href, Rel: rel}
}

type versionDoc struct {
	ID         string `json:"id"`
	Links      []Link `json:"links"`
	MaxVersion string `json:"max_version"`
	MinVersion string `json:"min_version"`
	Status     string `json:"status"`
}

type rootDoc struct {
	Description string       `json:"description"`
	Name        string       `json:"name"`
	Versions    []versionDoc `json:"versions"`
}

// rootDocument is the answer of GET / (root.py Root.convert).
func rootDocument(base string) rootDoc {
	return rootDoc{
		Description: "Magnum is an OpenStack project which aims to provide container cluster management.",
		Name:        "OpenStack Magnum API",
		Versions: []versionDoc{{
			ID:         "v1",
			Links:      []Link{MakeLink("self", base, "v1", "", true)},
			MaxVersion: microversion.Max.String(),
			MinVersion: microversion.Min.String(),
			Status:     "CURRENT",
		}},
	}
}

type mediaTypeDoc struct {
	Base string `json:"base"`
	Type string `json:"type"`
}

type v1Doc struct {
	Certificates     []Link         `json:"certificates"`
	Clusters         []Link         `json:"clusters"`
	ClusterTemplates []Link         `json:"clustertemplates"`
	Credentials      []Link         `json:"credentials"`
	Federations      []Link         `json:"federations"`
	ID               string         `json:"id"`
	Links            []Link         `json:"links"`
	MediaTypes       []mediaTypeDoc `json:"media_types"`
	MServices        []Link         `json:"mservices"`
	NodeGroups       []Link         `json:"nodegroups"`
	Quotas           []Link         `json:"quotas"`
	Stats            []Link         `json:"stats"`
}

// v1Document is the answer of GET /v1 (v1/__init__.py V1.convert).
func v1Document(base string) v1Doc {
	pair := func(res, args string) []Link {
		return []Link{MakeLink("self", base, res, args, false), MakeLink("bookmark", base, res, args, true)}
	}
	nodegroups := []Link{
		{Href: base + "/v1/clusters/{cluster_id}/nodegroups", Rel: "self"},
		{Href: base + "/clusters/{cluster_id}/nodegroups", Rel: "bookmark"},
	}
	return v1Doc{
		Certificates:     pair("certificates", ""),
		Clusters:         pair("clusters", ""),
		ClusterTemplates: pair("clustertemplates", ""),
		Credentials:      pair("credentials", ""),
		Federations:      pair("federations", ""),
		ID:               "v1",
		Links: []Link{
			MakeLink("self", base, "v1", "", true),
			{Href: "http://docs.openstack.org/developer/magnum/dev/api-spec-v1.html", Rel: "describedby", Type: "text/html"},
		},
		MediaTypes: []mediaTypeDoc{{Base: "application/json", Type: "application/vnd.openstack.magnum.v1+json"}},
		MServices:  pair("mservices", ""),
		NodeGroups: nodegroups,
		Quotas:     pair("quotas", ""),
		Stats:      pair("stats", ""),
	}
}

func (s *server) getV1(w http.ResponseWriter, r *http.Request) error {
	return WriteJSON(w, http.StatusOK, v1Document(BaseURL(r)))
}

// NextLink returns the "next" URL of a full page (magnum/api/controllers/v1/
// collection.py get_next): "<base>/v1/<resource>?<k>=<v>&…limit=<n>&marker=<m>",
// with the extra arguments in the order given.
func NextLink(r *http.Request, resource string, args [][2]string, limit int, marker string) string {
	q := "?"
	for _, kv := range args {
		q += kv[0] + "=" + kv[1] + "&"
	}
	q += "limit=" + strconv.Itoa(limit) + "&marker=" + marker
	return MakeLink("next", BaseURL(r), resource, q, false).Href
}
