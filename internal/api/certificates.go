package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// certificate is the wire form of Magnum's Certificate
// (magnum/api/controllers/v1/certificate.py): GET answers cluster_uuid,
// links and pem; POST adds csr, and ca_cert_type when the request had it.
type certificate struct {
	ClusterUUID string          `json:"cluster_uuid"`
	Links       []Link          `json:"links"`
	CSR         *string         `json:"csr,omitempty"`
	PEM         string          `json:"pem"`
	CACertType  json.RawMessage `json:"ca_cert_type,omitempty"`
}

// certificateAttrs are the attributes of the Certificate body type in
// WSME's order (declaration order: the class, then APIBase).
var certificateAttrs = []string{"cluster_uuid", "links", "csr", "pem", "ca_cert_type", "created_at", "updated_at"}

func (s *server) registerCertificates() {
	s.register("certificate.get_one", s.getCertificate)
	s.register("certificate.post", s.postCertificate)
	s.register("certificate.patch", s.patchCertificate)
}

// certConductor returns the conductor, or the 501 of an unimplemented
// route when the server has none (API tests without a back end).
func (s *server) certConductor() (*conductor.Conductor, error) {
	if s.opts.Conductor == nil {
		return nil, notImplemented(nil, nil)
	}
	return s.opts.Conductor, nil
}

// certClusterTarget is the policy target Magnum passes for certificates:
// the cluster's as_dict() (the default rules read project_id and user_id).
func certClusterTarget(cl *magnum.Cluster) map[string]any {
	t := map[string]any{
		"id":                  cl.ID,
		"uuid":                cl.UUID,
		"name":                cl.Name,
		"project_id":          cl.ProjectID,
		"user_id":             cl.UserID,
		"cluster_template_id": cl.ClusterTemplateID,
		"status":              nil,
	}
	if cl.Status != nil {
		t["status"] = string(*cl.Status)
	}
	return t
}

// certLinks are the self and bookmark links of a cluster's certificate.
func certLinks(r *http.Request, clusterUUID string) []Link {
	base := BaseURL(r)
	return []Link{
		MakeLink("self", base, "certificates", clusterUUID, false),
		MakeLink("bookmark", base, "certificates", clusterUUID, true),
	}
}

// getCertificate is GET /v1/certificates/{cluster_ident} (#27): lookup in
// the caller's project (404/409), certificate:get on the cluster, then
// the CA PEM chosen by ca_cert_type.
func (s *server) getCertificate(w http.ResponseWriter, r *http.Request) error {
	cond, err := s.certConductor()
	if err != nil {
		return err
	}
	ctx := r.Context()
	rc := magnum.FromContext(ctx)
	cl, err := cond.GetCluster(ctx, r.PathValue("cluster_ident"), conductor.ScopeFor(rc, false))
	if err != nil {
		return err
	}
	if err := s.Enforce(r, "certificate:get", certClusterTarget(cl)); err != nil {
		return err
	}
	caType, _ := QueryString(r, "ca_cert_type")
	pem, err := cond.GetCACertificate(ctx, cl, caType)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, certificate{ClusterUUID: cl.UUID, Links: certLinks(r, cl.UUID), PEM: pem})
}

// certRequest is a parsed POST body.
type certRequest struct {
	cluster    *magnum.Cluster
	csr        *string
	caType     string
	caTypeJSON json.RawMessage
}

// parseCertificateBody builds the Certificate body as WSME does: unknown
// attributes first, then each attribute in declaration order, the cluster
// being looked up while cluster_uuid is set (not found → 400).
func (s *server) parseCertificateBody(r *http.Request, cond *conductor.Conductor) (*certRequest, error) {
	body, err := RequireBody(r)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, magnum.Invalid("Request must be a JSON dict")
	}
	known := map[string]bool{}
	for _, a := range certificateAttrs {
		known[a] = true
	}
	var unknown []string
	for _, k := range objectKeys(body) {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		return nil, magnum.UnknownAttribute("certificate", unknown)
	}
	req := &certRequest{}
	ctx := r.Context()
	for _, a := range certificateAttrs {
		v, present := obj[a]
		if !present || v == nil {
			if present && a == "ca_cert_type" {
				req.caTypeJSON = json.RawMessage("null")
			}
			continue
		}
		switch a {
		case "cluster_uuid":
			ident, ok := v.(string)
			if !ok {
				// WSME passes a non-string through to the name lookup.
				return nil, magnum.ClusterNotFound(magnum.PyStr(v)).WithStatus(http.StatusBadRequest)
			}
			if ident == "" {
				continue // falsy: WSME leaves the attribute unset
			}
			cl, err := cond.GetCluster(ctx, ident, conductor.ScopeFor(magnum.FromContext(ctx), false))
			if err != nil {
				var me *magnum.Error
				if errors.As(err, &me) && me.Kind == "ClusterNotFound" {
					return nil, me.WithStatus(http.StatusBadRequest)
				}
				return nil, err
			}
			req.cluster = cl
		case "links", "created_at", "updated_at":
			return nil, magnum.ReadOnlyField(a, v)
		case "csr":
			sv, ok := v.(string)
			if !ok {
				return nil, magnum.NotAString(a, v)
			}
			if sv == "" {
				return nil, magnum.TooShort(a, sv, 1)
			}
			req.csr = &sv
		case "pem":
			if _, ok := v.(string); !ok {
				return nil, magnum.NotAString(a, v)
			}
		case "ca_cert_type":
			sv, ok := v.(string)
			if !ok {
				return nil, magnum.NotAString(a, v)
			}
			req.caType = sv
			req.caTypeJSON, _ = json.Marshal(sv)
		}
	}
	return req, nil
}

// postCertificate is POST /v1/certificates (#28): the body (with the
// cluster lookup), certificate:create on the cluster, then the CSR signed
// by the CA chosen by ca_cert_type; 201.
func (s *server) postCertificate(w http.ResponseWriter, r *http.Request) error {
	cond, err := s.certConductor()
	if err != nil {
		return err
	}
	req, err := s.parseCertificateBody(r, cond)
	if err != nil {
		return err
	}
	if req.cluster == nil {
		// Deviation: Magnum answers a body without cluster_uuid with a 500
		// (the lookup of an unset value fails); we answer 400.
		return magnum.MandatoryFieldMissing("cluster_uuid")
	}
	if err := s.Enforce(r, "certificate:create", certClusterTarget(req.cluster)); err != nil {
		return err
	}
	if req.csr == nil {
		// Deviation: without csr Magnum's conductor fails with a 500
		// (the object field is unset); we answer 400.
		return magnum.MandatoryFieldMissing("csr")
	}
	pem, err := cond.SignCertificate(r.Context(), req.cluster, *req.csr, req.caType)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusCreated, certificate{
		ClusterUUID: req.cluster.UUID, Links: certLinks(r, req.cluster.UUID), CSR: req.csr, PEM: pem,
		CACertType: req.caTypeJSON,
	})
}

// patchCertificate is PATCH /v1/certificates/{cluster_ident} (#29): lookup,
// certificate:rotate_ca on the cluster, then the CA rotation; 202 with
// the cluster UUID.
func (s *server) patchCertificate(w http.ResponseWriter, r *http.Request) error {
	cond, err := s.certConductor()
	if err != nil {
		return err
	}
	ctx := r.Context()
	rc := magnum.FromContext(ctx)
	cl, err := cond.GetCluster(ctx, r.PathValue("cluster_ident"), conductor.ScopeFor(rc, false))
	if err != nil {
		return err
	}
	if err := s.Enforce(r, "certificate:rotate_ca", certClusterTarget(cl)); err != nil {
		return err
	}
	if err := cond.RotateCA(ctx, cl); err != nil {
		return err
	}
	return WriteJSON(w, http.StatusAccepted, map[string]string{"uuid": cl.UUID})
}
