package db

import (
	"context"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

var clusterTemplateTable = &table[magnum.ClusterTemplate]{
	name: "cluster_template",
	cols: []string{"created_at", "updated_at", "uuid", "name", "flavor_id", "keypair_id", "image_id",
		"external_network_id", "dns_nameserver", "apiserver_port", "project_id", "user_id", "docker_volume_size",
		"fixed_network", "master_flavor_id", "cluster_distro", "coe", "http_proxy", "https_proxy", "no_proxy",
		"registry_enabled", "network_driver", "labels", "tls_disabled", "public", "server_type", "volume_driver",
		"insecure_registry", "docker_storage_driver", "master_lb_enabled", "fixed_subnet", "floating_ip_enabled",
		"hidden", "tags", "driver"},
	markerCol: "uuid",
	id:        func(v *magnum.ClusterTemplate) *int64 { return &v.ID },
	created:   func(v *magnum.ClusterTemplate) *time.Time { return &v.CreatedAt },
	updated:   func(v *magnum.ClusterTemplate) **time.Time { return &v.UpdatedAt },
	binds: func(q *Queries, v *magnum.ClusterTemplate) []any {
		return []any{ts{&v.CreatedAt, q.d}, nts{&v.UpdatedAt, q.d}, str{&v.UUID}, str{&v.Name}, &v.FlavorID,
			&v.KeypairID, &v.ImageID, &v.ExternalNetworkID, &v.DNSNameserver, &v.APIServerPort, str{&v.ProjectID},
			str{&v.UserID}, &v.DockerVolumeSize, &v.FixedNetwork, &v.MasterFlavorID, &v.ClusterDistro, &v.COE,
			&v.HTTPProxy, &v.HTTPSProxy, &v.NoProxy, &v.RegistryEnabled, &v.NetworkDriver, jsonMap{&v.Labels},
			&v.TLSDisabled, &v.Public, &v.ServerType, &v.VolumeDriver, &v.InsecureRegistry, &v.DockerStorageDriver,
			&v.MasterLBEnabled, &v.FixedSubnet, &v.FloatingIPEnabled, &v.Hidden, &v.Tags, &v.Driver}
	},
}

// TemplateScope is the visibility of cluster templates for one caller
// (Magnum's template queries, see logic.md §3).
type TemplateScope struct {
	// Scope is the caller's own rows; Scope.AllProjects shows every
	// template (admin with an *_all_projects rule).
	Scope
	// PublicHidden adds public templates that are hidden (admins in
	// requests without the all-projects rule). Public templates that are
	// not hidden are always visible.
	PublicHidden bool
}

func (s TemplateScope) cond() (cond, error) {
	var c cond
	own, args, err := s.Scope.where(true)
	if err != nil {
		return c, err
	}
	if own == "" {
		return c, nil
	}
	public := "public = TRUE AND hidden = FALSE"
	if s.PublicHidden {
		public = "public = TRUE"
	}
	c.add(own+" OR ("+public+")", args...)
	return c, nil
}

// GetClusterTemplateByID returns the visible template with the database id.
func (q *Queries) GetClusterTemplateByID(ctx context.Context, id int64, s TemplateScope) (*magnum.ClusterTemplate, error) {
	c, err := s.cond()
	if err != nil {
		return nil, err
	}
	c.add("id = ?", id)
	return getOne(ctx, q, clusterTemplateTable, c)
}

// GetClusterTemplateByUUID returns the visible template with uuid.
func (q *Queries) GetClusterTemplateByUUID(ctx context.Context, uuid string, s TemplateScope) (*magnum.ClusterTemplate, error) {
	c, err := s.cond()
	if err != nil {
		return nil, err
	}
	c.add("uuid = ?", uuid)
	return getOne(ctx, q, clusterTemplateTable, c)
}

// GetClusterTemplatesByName returns every visible template whose name
// matches (case-insensitively, as on MariaDB); more than one is a 409 for
// the caller.
func (q *Queries) GetClusterTemplatesByName(ctx context.Context, name string, s TemplateScope) ([]magnum.ClusterTemplate, error) {
	c, err := s.cond()
	if err != nil {
		return nil, err
	}
	c.add(q.d.nameEquals("name"), name)
	return all(ctx, q, clusterTemplateTable, c, "id ASC", 0)
}

// GetClusterTemplatesByUUIDs returns the visible templates among uuids in
// one query, keyed by uuid (the templates of a page of clusters).
func (q *Queries) GetClusterTemplatesByUUIDs(ctx context.Context, uuids []string, s TemplateScope) (map[string]*magnum.ClusterTemplate, error) {
	out := map[string]*magnum.ClusterTemplate{}
	if len(uuids) == 0 {
		return out, nil
	}
	c, err := s.cond()
	if err != nil {
		return nil, err
	}
	c.add(inList("uuid", len(uuids)), anySlice(uuids)...)
	rows, err := all(ctx, q, clusterTemplateTable, c, "id ASC", 0)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		out[rows[i].UUID] = &rows[i]
	}
	return out, nil
}

// ListClusterTemplates lists the visible templates.
func (q *Queries) ListClusterTemplates(ctx context.Context, s TemplateScope, o ListOptions) ([]magnum.ClusterTemplate, error) {
	c, err := s.cond()
	if err != nil {
		return nil, err
	}
	return list(ctx, q, clusterTemplateTable, c, o)
}

// CreateClusterTemplate inserts v with Magnum's client-side defaults
// (registry_enabled, tls_disabled, public, master_lb_enabled, hidden false;
// floating_ip_enabled true; server_type "vm"; labels {}) and sets v.ID and
// v.CreatedAt. A duplicate uuid → ErrDuplicate.
func (q *Queries) CreateClusterTemplate(ctx context.Context, v *magnum.ClusterTemplate) error {
	v.RegistryEnabled = defaultBool(v.RegistryEnabled, false)
	v.TLSDisabled = defaultBool(v.TLSDisabled, false)
	v.Public = defaultBool(v.Public, false)
	v.MasterLBEnabled = defaultBool(v.MasterLBEnabled, false)
	v.FloatingIPEnabled = defaultBool(v.FloatingIPEnabled, true)
	v.Hidden = defaultBool(v.Hidden, false)
	if v.ServerType == nil {
		vm := "vm"
		v.ServerType = &vm
	}
	if v.Labels == nil {
		v.Labels = map[string]string{}
	}
	return insert(ctx, q, clusterTemplateTable, v)
}

// UpdateClusterTemplate writes the named columns of v and sets updated_at.
func (q *Queries) UpdateClusterTemplate(ctx context.Context, v *magnum.ClusterTemplate, cols ...string) error {
	return update(ctx, q, clusterTemplateTable, v, cols)
}

// DeleteClusterTemplate deletes the template with uuid.
func (q *Queries) DeleteClusterTemplate(ctx context.Context, uuid string) error {
	var c cond
	c.add("uuid = ?", uuid)
	return deleteOne(ctx, q, "cluster_template", c)
}

// ClusterTemplateInUse reports whether any cluster (any project, any
// status) references the template uuid.
func (q *Queries) ClusterTemplateInUse(ctx context.Context, uuid string) (bool, error) {
	var c cond
	c.add("cluster_template_id = ?", uuid)
	n, err := count(ctx, q, "cluster", c)
	return n > 0, err
}
