package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/api/jsonpatch"
	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// clusterTemplateView is the wire form of a cluster template (types.md §4):
// every field, nulls included, in Magnum's declaration order.
type clusterTemplateView struct {
	UUID                string            `json:"uuid"`
	Name                *string           `json:"name"`
	COE                 *string           `json:"coe"`
	ImageID             *string           `json:"image_id"`
	FlavorID            *string           `json:"flavor_id"`
	MasterFlavorID      *string           `json:"master_flavor_id"`
	DNSNameserver       *string           `json:"dns_nameserver"`
	KeypairID           *string           `json:"keypair_id"`
	ExternalNetworkID   *string           `json:"external_network_id"`
	FixedNetwork        *string           `json:"fixed_network"`
	FixedSubnet         *string           `json:"fixed_subnet"`
	NetworkDriver       *string           `json:"network_driver"`
	APIServerPort       *int              `json:"apiserver_port"`
	DockerVolumeSize    *int              `json:"docker_volume_size"`
	ClusterDistro       *string           `json:"cluster_distro"`
	Links               []Link            `json:"links"`
	HTTPProxy           *string           `json:"http_proxy"`
	HTTPSProxy          *string           `json:"https_proxy"`
	NoProxy             *string           `json:"no_proxy"`
	VolumeDriver        *string           `json:"volume_driver"`
	RegistryEnabled     *bool             `json:"registry_enabled"`
	Labels              map[string]string `json:"labels"`
	TLSDisabled         *bool             `json:"tls_disabled"`
	Public              *bool             `json:"public"`
	ServerType          *string           `json:"server_type"`
	InsecureRegistry    *string           `json:"insecure_registry"`
	DockerStorageDriver *string           `json:"docker_storage_driver"`
	MasterLBEnabled     *bool             `json:"master_lb_enabled"`
	FloatingIPEnabled   *bool             `json:"floating_ip_enabled"`
	ProjectID           *string           `json:"project_id"`
	UserID              *string           `json:"user_id"`
	Hidden              *bool             `json:"hidden"`
	Tags                *string           `json:"tags"`
	Driver              *string           `json:"driver"`
	CreatedAt           *string           `json:"created_at"`
	UpdatedAt           *string           `json:"updated_at"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// clusterTemplateViewOf renders t for r's application URL.
func clusterTemplateViewOf(r *http.Request, t *magnum.ClusterTemplate) clusterTemplateView {
	base := BaseURL(r)
	labels := t.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	return clusterTemplateView{
		UUID: t.UUID, Name: nullable(t.Name), COE: t.COE, ImageID: t.ImageID, FlavorID: t.FlavorID,
		MasterFlavorID: t.MasterFlavorID, DNSNameserver: t.DNSNameserver, KeypairID: t.KeypairID,
		ExternalNetworkID: t.ExternalNetworkID, FixedNetwork: t.FixedNetwork, FixedSubnet: t.FixedSubnet,
		NetworkDriver: t.NetworkDriver, APIServerPort: t.APIServerPort, DockerVolumeSize: t.DockerVolumeSize,
		ClusterDistro: t.ClusterDistro,
		Links: []Link{
			MakeLink("self", base, "clustertemplates", t.UUID, false),
			MakeLink("bookmark", base, "clustertemplates", t.UUID, true),
		},
		HTTPProxy: t.HTTPProxy, HTTPSProxy: t.HTTPSProxy, NoProxy: t.NoProxy, VolumeDriver: t.VolumeDriver,
		RegistryEnabled: t.RegistryEnabled, Labels: labels, TLSDisabled: t.TLSDisabled, Public: t.Public,
		ServerType: t.ServerType, InsecureRegistry: t.InsecureRegistry, DockerStorageDriver: t.DockerStorageDriver,
		MasterLBEnabled: t.MasterLBEnabled, FloatingIPEnabled: t.FloatingIPEnabled,
		ProjectID: nullable(t.ProjectID), UserID: nullable(t.UserID), Hidden: t.Hidden, Tags: t.Tags,
		Driver: t.Driver, CreatedAt: FormatTimePtr(nonZero(t.CreatedAt)), UpdatedAt: FormatTimePtr(t.UpdatedAt),
	}
}

func (s *server) registerClusterTemplates() {
	s.register("cluster_template.get_all", s.listClusterTemplates)
	s.register("cluster_template.detail", s.detailClusterTemplates)
	s.register("cluster_template.get_one", s.getClusterTemplate)
	s.register("cluster_template.post", s.createClusterTemplate)
	s.register("cluster_template.patch", s.patchClusterTemplate)
	s.register("cluster_template.delete", s.deleteClusterTemplate)
}

// errCTNoConductor is the 500 of a server built without a conductor.
var errCTNoConductor = errors.New("api: Options.Conductor is required by the cluster template handlers")

// listClusterTemplates is GET /v1/clustertemplates (#16).
func (s *server) listClusterTemplates(w http.ResponseWriter, r *http.Request) error {
	if err := s.Enforce(r, "clustertemplate:get_all", nil); err != nil {
		return err
	}
	return s.clusterTemplateCollection(w, r, "clustertemplates", "clustertemplate:get_all_all_projects")
}

// detailClusterTemplates is GET /v1/clustertemplates/detail (#17).
func (s *server) detailClusterTemplates(w http.ResponseWriter, r *http.Request) error {
	if err := s.Enforce(r, "clustertemplate:detail", nil); err != nil {
		return err
	}
	// Magnum: /detail only works on the collection; the segment before
	// "detail" must be "clustertemplates".
	parts := strings.Split(r.URL.Path, "/")
	if len(parts) < 2 || parts[len(parts)-2] != "clustertemplates" {
		return magnum.HTTPNotFoundUnformatted()
	}
	return s.clusterTemplateCollection(w, r, "clustertemplates/detail", "clustertemplate:detail_all_projects")
}

// clusterTemplateCollection is the common part of #16 and #17: the admin
// all-projects rule, limit and sort direction, marker, list, next link.
func (s *server) clusterTemplateCollection(w http.ResponseWriter, r *http.Request, resource, allRule string) error {
	c := s.opts.Conductor
	if c == nil {
		return errCTNoConductor
	}
	rc := magnum.FromContext(r.Context())
	all := false
	if rc != nil && rc.IsAdmin {
		if err := s.Enforce(r, allRule, nil); err != nil {
			return err
		}
		all = true
	}
	limit := s.opts.MaxLimit
	if n, ok := QueryInt(r, "limit"); ok {
		if n <= 0 {
			return magnum.LimitNotPositive()
		}
		limit = min(n, s.opts.MaxLimit)
	}
	sortKey, ok := QueryString(r, "sort_key")
	if !ok {
		sortKey = "id"
	}
	sortDir, ok := QueryString(r, "sort_dir")
	if !ok {
		sortDir = "asc"
	}
	if err := magnum.ValidateSortDir(sortDir); err != nil {
		return err
	}
	marker, _ := QueryString(r, "marker")
	rows, err := c.ListClusterTemplates(r.Context(), c.TemplateScopeFor(rc, all), marker, limit, sortKey, sortDir)
	if err != nil {
		return err
	}
	out := make([]clusterTemplateView, len(rows))
	for i := range rows {
		out[i] = clusterTemplateViewOf(r, &rows[i])
	}
	body := map[string]any{"clustertemplates": out}
	if len(rows) > 0 && len(rows) == limit {
		body["next"] = NextLink(r, resource, [][2]string{{"sort_key", sortKey}, {"sort_dir", sortDir}}, limit, rows[len(rows)-1].UUID)
	}
	return WriteJSON(w, http.StatusOK, body)
}

// getClusterTemplate is GET /v1/clustertemplates/{ident} (#18).
func (s *server) getClusterTemplate(w http.ResponseWriter, r *http.Request) error {
	c := s.opts.Conductor
	if c == nil {
		return errCTNoConductor
	}
	rc := magnum.FromContext(r.Context())
	ident := r.PathValue("cluster_template_ident")
	admin := rc != nil && rc.IsAdmin
	if admin {
		if err := s.Enforce(r, "clustertemplate:get_one_all_projects", nil); err != nil {
			return err
		}
	}
	t, err := c.GetClusterTemplate(r.Context(), ident, c.TemplateScopeFor(rc, admin))
	if err != nil {
		return err
	}
	callerProject := ""
	if rc != nil {
		callerProject = rc.ProjectID
	}
	if t.Hidden != nil && *t.Hidden && !admin && t.ProjectID != callerProject {
		return magnum.ClusterTemplateNotFound(ident)
	}
	if t.Public == nil || !*t.Public {
		if err := s.Enforce(r, "clustertemplate:get", conductor.TemplateDoc(t)); err != nil {
			return err
		}
	}
	return WriteJSON(w, http.StatusOK, clusterTemplateViewOf(r, t))
}

// deleteClusterTemplate is DELETE /v1/clustertemplates/{ident} (#21).
func (s *server) deleteClusterTemplate(w http.ResponseWriter, r *http.Request) error {
	c := s.opts.Conductor
	if c == nil {
		return errCTNoConductor
	}
	rc := magnum.FromContext(r.Context())
	ident := r.PathValue("cluster_template_ident")
	admin := rc != nil && rc.IsAdmin
	if admin {
		if err := s.Enforce(r, "clustertemplate:delete_all_projects", nil); err != nil {
			return err
		}
	}
	t, err := c.GetClusterTemplate(r.Context(), ident, c.TemplateScopeFor(rc, admin))
	if err != nil {
		return err
	}
	if err := s.Enforce(r, "clustertemplate:delete", conductor.TemplateDoc(t)); err != nil {
		return err
	}
	if err := c.DeleteClusterTemplate(r.Context(), ident, t); err != nil {
		return err
	}
	return WriteJSON(w, http.StatusNoContent, nil)
}

// publishCheck evaluates clustertemplate:publish with the caller's target
// and turns a denial into ClusterTemplatePublishDenied.
func (s *server) publishCheck(r *http.Request) func() error {
	return func() error {
		err := s.Enforce(r, "clustertemplate:publish", nil)
		var me *magnum.Error
		if errors.As(err, &me) && me.Kind == "PolicyNotAuthorized" {
			return magnum.ClusterTemplatePublishDenied()
		}
		return err
	}
}

// createClusterTemplate is POST /v1/clustertemplates (#19): 201 with a
// Location header.
func (s *server) createClusterTemplate(w http.ResponseWriter, r *http.Request) error {
	c := s.opts.Conductor
	if c == nil {
		return errCTNoConductor
	}
	body, err := RequireBody(r)
	if err != nil {
		return err
	}
	t, has, err := parseClusterTemplateBody(body)
	if err != nil {
		return err
	}
	rc := magnum.FromContext(r.Context())
	created, err := c.CreateClusterTemplate(r.Context(), rc, conductor.TemplateCreate{
		Template:  *t,
		Has:       has,
		Authorize: func() error { return s.Enforce(r, "clustertemplate:create", nil) },
		Publish:   s.publishCheck(r),
	})
	if err != nil {
		return err
	}
	w.Header().Set("Location", BaseURL(r)+"/v1/clustertemplates/"+created.UUID)
	return WriteJSON(w, http.StatusCreated, clusterTemplateViewOf(r, created))
}

// patchClusterTemplate is PATCH /v1/clustertemplates/{ident} (#20): 200
// with the saved template.
func (s *server) patchClusterTemplate(w http.ResponseWriter, r *http.Request) error {
	c := s.opts.Conductor
	if c == nil {
		return errCTNoConductor
	}
	body, err := RequireBody(r)
	if err != nil {
		return err
	}
	ops, err := jsonpatch.ParseAndCheck(body, jsonpatch.ClusterTemplateRules)
	if err != nil {
		return err
	}
	rc := magnum.FromContext(r.Context())
	ident := r.PathValue("cluster_template_ident")
	updated, err := c.UpdateClusterTemplate(r.Context(), rc, conductor.TemplateUpdate{
		Ident: ident,
		Apply: func(doc map[string]any) (map[string]any, error) {
			return jsonpatch.Apply(doc, ops, jsonpatch.ClusterTemplateRules)
		},
		Coerce: coerceClusterTemplateObject,
		Build:  buildClusterTemplate,
		AllProjects: func() (bool, error) {
			if rc == nil || !rc.IsAdmin {
				return false, nil
			}
			if err := s.Enforce(r, "clustertemplate:update_all_projects", nil); err != nil {
				return false, err
			}
			return true, nil
		},
		Authorize: func(t *magnum.ClusterTemplate) error {
			return s.Enforce(r, "clustertemplate:update", conductor.TemplateDoc(t))
		},
		Publish: s.publishCheck(r),
	})
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, clusterTemplateViewOf(r, updated))
}

// ---- WSME ClusterTemplate attribute rules ----

// ctKind is the WSME type of a ClusterTemplate attribute.
type ctKind int

const (
	ctString ctKind = iota
	ctUUID
	ctCOE
	ctDNS
	ctInt
	ctBool
	ctLabels
	ctServerType
	ctReadOnly
)

// ctAttr is one attribute of the WSME ClusterTemplate type.
type ctAttr struct {
	name      string
	kind      ctKind
	min, max  int // string lengths or integer bounds (max 0: none)
	mandatory bool
}

// clusterTemplateAttrs are the attributes of Magnum's ClusterTemplate API
// type in declaration order (cluster_template.py:45-167, then APIBase),
// which is the order WSME converts and validates them.
var clusterTemplateAttrs = []ctAttr{
	{name: "uuid", kind: ctUUID},
	{name: "name", kind: ctString, min: 1, max: 255},
	{name: "coe", kind: ctCOE},
	{name: "image_id", kind: ctString, min: 1, max: 255, mandatory: true},
	{name: "flavor_id", kind: ctString, min: 1, max: 255},
	{name: "master_flavor_id", kind: ctString, min: 1, max: 255},
	{name: "dns_nameserver", kind: ctDNS},
	{name: "keypair_id", kind: ctString, min: 1, max: 255},
	{name: "external_network_id", kind: ctString, min: 1, max: 255},
	{name: "fixed_network", kind: ctString, min: 1, max: 255},
	{name: "fixed_subnet", kind: ctString, min: 1, max: 255},
	{name: "network_driver", kind: ctString, min: 1, max: 255},
	{name: "apiserver_port", kind: ctInt, min: 1024, max: 65535},
	{name: "docker_volume_size", kind: ctInt, min: 1},
	{name: "cluster_distro", kind: ctString, min: 1, max: 255},
	{name: "links", kind: ctReadOnly},
	{name: "http_proxy", kind: ctString, min: 1, max: 255},
	{name: "https_proxy", kind: ctString, min: 1, max: 255},
	{name: "no_proxy", kind: ctString, min: 1, max: 255},
	{name: "volume_driver", kind: ctString, min: 1, max: 255},
	{name: "registry_enabled", kind: ctBool},
	{name: "labels", kind: ctLabels},
	{name: "tls_disabled", kind: ctBool},
	{name: "public", kind: ctBool},
	{name: "server_type", kind: ctServerType},
	{name: "insecure_registry", kind: ctString, min: 1, max: 255},
	{name: "docker_storage_driver", kind: ctString, min: 1, max: 255},
	{name: "master_lb_enabled", kind: ctBool},
	{name: "floating_ip_enabled", kind: ctBool},
	{name: "project_id", kind: ctReadOnly},
	{name: "user_id", kind: ctReadOnly},
	{name: "hidden", kind: ctBool},
	{name: "tags", kind: ctString, min: 0, max: 255},
	{name: "driver", kind: ctString, min: 1, max: 255},
	{name: "created_at", kind: ctReadOnly},
	{name: "updated_at", kind: ctReadOnly},
}

// ctDefaults are the WSME defaults read back for unset attributes.
func ctDefaults(t *magnum.ClusterTemplate) {
	f, tr := false, true
	vm := string(magnum.ServerTypeVM)
	t.RegistryEnabled, t.TLSDisabled, t.Public = &f, &f, &f
	t.MasterLBEnabled, t.Hidden = &f, &f
	t.FloatingIPEnabled = &tr
	t.ServerType = &vm
}

// strictBoolValue is oslo.utils bool_from_string(strict=True) of a JSON or
// patch value.
func strictBoolValue(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		return strictBool(x)
	}
	return strictBool(magnum.PyStr(v))
}

// invalidBool is the answer to a value Magnum's BooleanType refuses.
//
// Deviation: Magnum fails with an unhandled 500 (its Invalid exception is
// built from a ValueError and cannot be rendered); we answer 400 with
// oslo.utils' message.
func invalidBool(field string, v any) *magnum.Error {
	return magnum.InvalidInput(field, v, fmt.Sprintf(
		"Unrecognized value '%s', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'", magnum.PyStr(v)))
}

// setTemplateField stores a validated value into t (nil clears).
func setTemplateField(t *magnum.ClusterTemplate, name string, v any) {
	sp := func(p **string) {
		if v == nil {
			*p = nil
			return
		}
		s := v.(string)
		*p = &s
	}
	ip := func(p **int) {
		if v == nil {
			*p = nil
			return
		}
		n := int(v.(int64))
		*p = &n
	}
	bp := func(p **bool) {
		if v == nil {
			*p = nil
			return
		}
		b := v.(bool)
		*p = &b
	}
	switch name {
	case "uuid":
		if v != nil {
			t.UUID = v.(string)
		}
	case "name":
		if v == nil {
			t.Name = ""
		} else {
			t.Name = v.(string)
		}
	case "coe":
		sp(&t.COE)
	case "image_id":
		sp(&t.ImageID)
	case "flavor_id":
		sp(&t.FlavorID)
	case "master_flavor_id":
		sp(&t.MasterFlavorID)
	case "dns_nameserver":
		sp(&t.DNSNameserver)
	case "keypair_id":
		sp(&t.KeypairID)
	case "external_network_id":
		sp(&t.ExternalNetworkID)
	case "fixed_network":
		sp(&t.FixedNetwork)
	case "fixed_subnet":
		sp(&t.FixedSubnet)
	case "network_driver":
		sp(&t.NetworkDriver)
	case "apiserver_port":
		ip(&t.APIServerPort)
	case "docker_volume_size":
		ip(&t.DockerVolumeSize)
	case "cluster_distro":
		sp(&t.ClusterDistro)
	case "http_proxy":
		sp(&t.HTTPProxy)
	case "https_proxy":
		sp(&t.HTTPSProxy)
	case "no_proxy":
		sp(&t.NoProxy)
	case "volume_driver":
		sp(&t.VolumeDriver)
	case "registry_enabled":
		bp(&t.RegistryEnabled)
	case "labels":
		if v == nil {
			t.Labels = nil
		} else {
			t.Labels = v.(map[string]string)
		}
	case "tls_disabled":
		bp(&t.TLSDisabled)
	case "public":
		bp(&t.Public)
	case "server_type":
		sp(&t.ServerType)
	case "insecure_registry":
		sp(&t.InsecureRegistry)
	case "docker_storage_driver":
		sp(&t.DockerStorageDriver)
	case "master_lb_enabled":
		bp(&t.MasterLBEnabled)
	case "floating_ip_enabled":
		bp(&t.FloatingIPEnabled)
	case "hidden":
		bp(&t.Hidden)
	case "tags":
		sp(&t.Tags)
	case "driver":
		sp(&t.Driver)
	}
}

// validateCTValue is WSME's attribute assignment check (validate_value of
// the attribute's type) for a non-null value; it returns the value to
// store (string, int64, bool or map[string]string). fromPatch selects the
// rules of a patched document, whose values are not converted first.
func validateCTValue(a ctAttr, v any, fromPatch bool) (any, error) {
	switch a.kind {
	case ctString:
		return magnum.ValidateString(a.name, v, a.min, a.max, nil, "")
	case ctUUID:
		s, ok := v.(string)
		if !ok || !magnum.IsUUIDLike(s) {
			return nil, magnum.InvalidUUID(magnum.PyStr(v))
		}
		return s, nil
	case ctCOE:
		s, ok := v.(string)
		if !ok || s != string(magnum.COEKubernetes) {
			return nil, magnum.InvalidEnum(a.name, v, []string{string(magnum.COEKubernetes)})
		}
		return s, nil
	case ctServerType:
		s, ok := v.(string)
		if !ok || (s != string(magnum.ServerTypeVM) && s != string(magnum.ServerTypeBM)) {
			return nil, magnum.InvalidEnum(a.name, v, []string{string(magnum.ServerTypeVM), string(magnum.ServerTypeBM)})
		}
		return s, nil
	case ctDNS:
		s, ok := v.(string)
		if !ok {
			return nil, errCTNoSplit(v)
		}
		if err := magnum.ValidateDNSList(s); err != nil {
			return nil, err
		}
		return s, nil
	case ctInt:
		var n int64
		switch x := v.(type) {
		case int64:
			n = x
		case bool:
			if x {
				n = 1
			}
		case *big.Int:
			if x.Sign() < 0 {
				return nil, magnum.BelowMinimum(a.name, v, a.min)
			}
			if a.max > 0 {
				return nil, magnum.AboveMaximum(a.name, v, a.max)
			}
			// Deviation: Python accepts integers of any size; the column
			// does not.
			return nil, errCTIntTooLarge(a.name, v)
		default:
			return nil, errCTIntCompare(a.name, v)
		}
		if n < int64(a.min) {
			return nil, magnum.BelowMinimum(a.name, v, a.min)
		}
		if a.max > 0 && n > int64(a.max) {
			return nil, magnum.AboveMaximum(a.name, v, a.max)
		}
		if n > math.MaxInt32 {
			// Deviation: Magnum's column is a 32-bit INTEGER; MariaDB
			// refuses the value with a 500.
			return nil, magnum.AboveMaximum(a.name, v, math.MaxInt32)
		}
		return n, nil
	case ctBool:
		b, ok := strictBoolValue(v)
		if !ok {
			return nil, invalidBool(a.name, v)
		}
		return b, nil
	case ctLabels:
		if fromPatch {
			switch v.(type) {
			case map[string]any, *jsonpatch.Dict:
			default:
				// Magnum rebuilds an object from the patched values first:
				// its dict field refuses other types with an unhandled error.
				return nil, errCTLabelsNotDict(v)
			}
		}
		m, err := jsonpatch.Labels("labels", v)
		if err != nil {
			return nil, err
		}
		if m == nil {
			m = map[string]string{}
		}
		return m, nil
	}
	return v, nil
}

// pyClassName is the bare Python class name of a JSON-like value.
func pyClassName(v any) string {
	s := magnum.PyClass(v)
	return strings.TrimSuffix(strings.TrimPrefix(s, "<class '"), "'>")
}

// parseClusterTemplateBody converts a POST body into template values as
// WSME does (wsme/rest/json.py fromjson): unknown attributes first, then
// each attribute in declaration order (conversion, read-only, mandatory,
// then the type's checks). It returns the values (WSME defaults applied to
// absent attributes) and the attributes present in the body.
func parseClusterTemplateBody(body []byte) (*magnum.ClusterTemplate, map[string]bool, error) {
	doc, err := decodeCTJSON(body)
	if err != nil {
		return nil, nil, magnum.InvalidJSONBody()
	}
	if doc == nil {
		// Deviation: Magnum fails with an unhandled 500 ("'NoneType' object
		// has no attribute 'coe'"); we answer WSME's missing argument.
		return nil, nil, magnum.MissingArgument("cluster_template")
	}
	obj, ok := doc.(*jsonpatch.Dict)
	if !ok {
		// Deviation: Magnum fails with an unhandled 500 ("'list' object
		// has no attribute 'keys'"); we answer 400.
		return nil, nil, errCTBodyNotDict(doc, doc)
	}
	known := map[string]bool{}
	for _, a := range clusterTemplateAttrs {
		known[a.name] = true
	}
	var unknown []string
	for _, k := range obj.Keys {
		if ks := k.(string); !known[ks] {
			unknown = append(unknown, ks)
		}
	}
	if len(unknown) > 0 {
		return nil, nil, magnum.UnknownAttribute("cluster_template", unknown)
	}
	t := &magnum.ClusterTemplate{}
	ctDefaults(t)
	has := map[string]bool{}
	for _, a := range clusterTemplateAttrs {
		v, present := obj.Get(a.name)
		if !present {
			if a.mandatory {
				return nil, nil, magnum.MandatoryFieldMissing(a.name)
			}
			continue
		}
		has[a.name] = true
		// fromjson: conversion to the base type.
		switch a.kind {
		case ctInt:
			if v != nil {
				n, err := magnum.ConvertInt("cluster_template", doc, v)
				if err != nil {
					return nil, nil, err
				}
				v = n
			}
		case ctLabels:
			if v != nil {
				if _, isDict := v.(*jsonpatch.Dict); !isDict {
					return nil, nil, errCTBodyNotDict(doc, v)
				}
			}
		case ctReadOnly:
			if a.name == "links" && v != nil {
				if _, isList := v.([]any); !isList {
					return nil, nil, errCTBodyNotList(doc, v)
				}
			}
			if (a.name == "created_at" || a.name == "updated_at") && v != nil {
				str, ok := parseCTDatetime(v)
				if !ok {
					return nil, nil, errCTBadDatetime(doc)
				}
				v = str
			}
			return nil, nil, magnum.ReadOnlyField(a.name, v)
		}
		if v == nil {
			setTemplateField(t, a.name, nil)
			continue
		}
		val, err := validateCTValue(a, v, false)
		if err != nil {
			return nil, nil, clientError(err)
		}
		setTemplateField(t, a.name, val)
	}
	return t, has, nil
}

// clientError turns a validation failure that Magnum leaves unhandled
// (500 with the exception text) into a 400 with the same text.
//
// Deviation: Magnum answers these malformed inputs with a 500.
func clientError(err error) error {
	var me *magnum.Error
	if errors.As(err, &me) && me.Status == http.StatusInternalServerError {
		return me.WithStatus(http.StatusBadRequest)
	}
	return err
}

// coerceClusterTemplateObject reproduces the field coercion of the
// template object Magnum's PATCH decorators build from the patched values
// (oslo.versionedobjects): the coe enum, the integer fields and the labels
// dict of strings. Failures carry Magnum's messages (see clientError).
func coerceClusterTemplateObject(doc map[string]any) error {
	if v, ok := doc["coe"]; ok && v != nil && v != string(magnum.COEKubernetes) {
		return clientError(errCTFieldValueInvalid(v))
	}
	for _, f := range []string{"apiserver_port", "docker_volume_size"} {
		if s, ok := doc[f].(string); ok {
			if _, err := magnum.ConvertInt(f, s, s); err != nil {
				return clientError(errCTIntLiteral(s))
			}
		}
	}
	labels, ok := doc["labels"]
	if !ok || labels == nil {
		return nil
	}
	var keys, vals []any
	switch x := labels.(type) {
	case *jsonpatch.Dict:
		keys, vals = x.Keys, x.Values
	case map[string]any:
		for k, v := range x {
			keys, vals = append(keys, k), append(vals, v)
		}
	default:
		return clientError(errCTLabelsNotDict(labels))
	}
	for i, k := range keys {
		switch vals[i].(type) {
		case string, int64, *big.Int, float64, bool:
		case nil:
			return clientError(errCTLabelNone(k))
		default:
			return clientError(errCTLabelNotString(k, vals[i]))
		}
	}
	return nil
}

// parseCTDatetime parses a date-time body value as WSME does before the
// read-only check, and renders it as Python's str(datetime).
func parseCTDatetime(v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		return "", false
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999Z07:00", "2006-01-02T15:04:05.999999", "2006-01-02 15:04:05.999999", "2006-01-02"} {
		t, err := time.Parse(layout, strings.TrimSpace(s))
		if err != nil {
			continue
		}
		out := t.Format("2006-01-02 15:04:05")
		if us := t.Nanosecond() / 1000; us != 0 {
			out += fmt.Sprintf(".%06d", us)
		}
		if strings.ContainsAny(layout, "Z") && (strings.HasSuffix(s, "Z") || strings.Count(s, "+") > 0 || strings.Count(s[10:], "-") > 0) {
			out += t.Format("-07:00")
		}
		return out, true
	}
	return "", false
}

// buildClusterTemplate rebuilds the API object from a patched attribute
// dictionary (ClusterTemplate(**doc)): absent attributes take their WSME
// default, present ones are validated without conversion.
func buildClusterTemplate(doc map[string]any) (*magnum.ClusterTemplate, error) {
	t := &magnum.ClusterTemplate{}
	ctDefaults(t)
	for _, a := range clusterTemplateAttrs {
		if a.kind == ctReadOnly || a.kind == ctUUID {
			continue
		}
		v, present := doc[a.name]
		if !present {
			switch a.kind {
			case ctBool, ctServerType:
				// WSME default kept.
			default:
				setTemplateField(t, a.name, nil)
			}
			continue
		}
		if v == nil {
			setTemplateField(t, a.name, nil)
			continue
		}
		val, err := validateCTValue(a, v, true)
		if err != nil {
			return nil, clientError(err)
		}
		setTemplateField(t, a.name, val)
	}
	return t, nil
}

// decodeCTJSON decodes a JSON body keeping object key order
// (*jsonpatch.Dict) and Python's number types (int64 or *big.Int for
// integers, float64 otherwise).
func decodeCTJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeCTValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

// maxCTDepth bounds the nesting of a decoded body.
const maxCTDepth = 100

func decodeCTValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxCTDepth {
		return nil, errors.New("too deep")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			d := &jsonpatch.Dict{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeCTValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				replaced := false
				for i, x := range d.Keys {
					if x.(string) == k {
						d.Values[i], replaced = v, true
					}
				}
				if !replaced {
					d.Keys = append(d.Keys, k)
					d.Values = append(d.Values, v)
				}
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return d, nil
		case '[':
			l := []any{}
			for dec.More() {
				v, err := decodeCTValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return l, nil
		}
		return nil, errors.New("unexpected delimiter")
	case json.Number:
		s := t.String()
		if strings.ContainsAny(s, ".eE") {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return nil, err
			}
			return f, nil
		}
		b, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, errors.New("bad number")
		}
		if b.IsInt64() {
			return b.Int64(), nil
		}
		return b, nil
	}
	return tok, nil
}

// ---- messages the error catalogue does not have ----
//
// Magnum raises these from Python itself (TypeError, AttributeError) or
// from oslo.versionedobjects, with the exception text as the message.

// errCTNoSplit is the AttributeError of validate_dns on a non-string.
func errCTNoSplit(v any) *magnum.Error {
	return magnum.ServerError(fmt.Sprintf("'%s' object has no attribute 'split'", pyClassName(v)))
}

// errCTIntTooLarge refuses an integer beyond 64 bits.
func errCTIntTooLarge(field string, v any) *magnum.Error {
	return magnum.InvalidInput(field, v, "Python int too large to convert to C long")
}

// errCTIntCompare is WSME's IntegerType check of a non-integer value.
func errCTIntCompare(field string, v any) *magnum.Error {
	return magnum.InvalidInput(field, v, fmt.Sprintf("'<' not supported between instances of '%s' and 'int'", pyClassName(v)))
}

// errCTLabelsNotDict is the object field's refusal of non-dict labels.
func errCTLabelsNotDict(v any) *magnum.Error {
	return magnum.ServerError(fmt.Sprintf("A dict is required in field labels, not a %s", pyClassName(v)))
}

// errCTLabelNone is the object field's refusal of a null label value.
func errCTLabelNone(k any) *magnum.Error {
	return magnum.ServerError(fmt.Sprintf("Field `labels[%s]' cannot be None", magnum.PyStr(k)))
}

// errCTLabelNotString is the object field's refusal of a structured label
// value.
func errCTLabelNotString(k, v any) *magnum.Error {
	return magnum.ServerError(fmt.Sprintf("A string is required in field labels[%s], not a %s", magnum.PyStr(k), pyClassName(v)))
}

// errCTFieldValueInvalid is the object enum field's refusal of a COE.
func errCTFieldValueInvalid(v any) *magnum.Error {
	return magnum.ServerError(fmt.Sprintf("Field value %s is invalid", magnum.PyStr(v)))
}

// errCTIntLiteral is the object integer field's refusal of a string.
func errCTIntLiteral(s string) *magnum.Error {
	return magnum.ServerError(magnum.IntLiteralError(s))
}

// errCTBodyNotDict is WSME's conversion error of a non-object value where
// an object is expected; it names the body argument and shows the body.
func errCTBodyNotDict(body, v any) *magnum.Error {
	return magnum.InvalidInput("cluster_template", body, "Value not a valid dict: "+magnum.PyStr(v))
}

// errCTBodyNotList is WSME's conversion error of a non-list links value.
func errCTBodyNotList(body, v any) *magnum.Error {
	return magnum.InvalidInput("cluster_template", body, "Value not a valid list: "+magnum.PyStr(v))
}

// errCTBadDatetime is WSME's conversion error of an unparsable date-time
// (the "%s" is literally in Magnum's message).
func errCTBadDatetime(body any) *magnum.Error {
	return magnum.InvalidInput("cluster_template", body, "Unknown string format: %s")
}
