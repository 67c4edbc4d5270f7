package conductor

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/openstack"
)

// TemplateScopeFor returns the template visibility of the caller
// (logic.md §3): every template when the caller is an admin and an
// *_all_projects rule allowed it; otherwise the caller's project (or user,
// for a token without a project) plus public templates that are not
// hidden, plus public hidden templates for admins.
func (c *Conductor) TemplateScopeFor(rc *magnum.RequestContext, allProjects bool) db.TemplateScope {
	if rc == nil {
		return db.TemplateScope{Scope: db.Scope{UserID: "\x00no-caller"}}
	}
	if rc.IsAdmin && allProjects {
		return db.TemplateScope{Scope: db.AllProjects}
	}
	s := db.TemplateScope{PublicHidden: rc.IsAdmin}
	if rc.ProjectID != "" {
		s.ProjectID = rc.ProjectID
	} else {
		// Magnum filters on user_id = NULL when the token carries neither;
		// no row has an empty user, so this matches only public rows.
		s.UserID = rc.UserID
		if s.UserID == "" {
			s.UserID = "\x00no-user"
		}
	}
	return s
}

// GetClusterTemplate resolves ident within scope: a UUID-like ident is
// looked up by uuid, anything else by name (logic.md §13). Not found →
// ClusterTemplateNotFound (404); a name matching several templates → 409.
func (c *Conductor) GetClusterTemplate(ctx context.Context, ident string, scope db.TemplateScope) (*magnum.ClusterTemplate, error) {
	if magnum.IsUUIDLike(ident) {
		t, err := c.DB.GetClusterTemplateByUUID(ctx, ident, scope)
		if errors.Is(err, db.ErrNotFound) {
			return nil, magnum.ClusterTemplateNotFound(ident)
		}
		if err != nil {
			return nil, fmt.Errorf("get cluster template %s: %w", ident, err)
		}
		return t, nil
	}
	return c.getClusterTemplateByName(ctx, ident, scope)
}

// GetClusterTemplateByRef resolves a template reference the way Magnum's
// ClusterTemplate.get does (cluster create): an integer-like ident is a
// database id, a UUID-like ident a uuid, anything else a name.
func (c *Conductor) GetClusterTemplateByRef(ctx context.Context, ident string, scope db.TemplateScope) (*magnum.ClusterTemplate, error) {
	if id, err := strconv.ParseInt(ident, 10, 64); err == nil && strconv.FormatInt(id, 10) == ident {
		t, err := c.DB.GetClusterTemplateByID(ctx, id, scope)
		if errors.Is(err, db.ErrNotFound) {
			return nil, magnum.ClusterTemplateNotFound(ident)
		}
		if err != nil {
			return nil, fmt.Errorf("get cluster template %s: %w", ident, err)
		}
		return t, nil
	}
	return c.GetClusterTemplate(ctx, ident, scope)
}

func (c *Conductor) getClusterTemplateByName(ctx context.Context, name string, scope db.TemplateScope) (*magnum.ClusterTemplate, error) {
	rows, err := c.DB.GetClusterTemplatesByName(ctx, name, scope)
	if err != nil {
		return nil, fmt.Errorf("get cluster template %s: %w", name, err)
	}
	switch len(rows) {
	case 0:
		return nil, magnum.ClusterTemplateNotFound(name)
	case 1:
		return &rows[0], nil
	}
	return nil, magnum.MultipleClusterTemplates()
}

// Kubernetes template rules of Magnum's K8sValidator
// (magnum/api/validation.py).
var (
	supportedNetworkDrivers = []string{"flannel", "calico", "cilium"}
	supportedServerTypes    = []string{"vm", "bm"}
	supportedVolumeDrivers  = []string{"cinder"}
)

// defaultBootVolumeSize is [cinder]/default_boot_volume_size.
const defaultBootVolumeSize = 0

// TemplateCreate is a cluster template POST after the body checks.
type TemplateCreate struct {
	// Template holds the body's values: nil pointers are absent or null
	// attributes. Defaults of the API type (booleans, server_type) are
	// already applied by the caller when the attribute was absent.
	Template magnum.ClusterTemplate
	// Has names the attributes present in the body, null ones included.
	Has map[string]bool
	// Authorize evaluates clustertemplate:create; it runs after the
	// decorator checks (COE, drivers, image), as in Magnum.
	Authorize func() error
	// Publish evaluates clustertemplate:publish; it runs when public or
	// hidden is true and its error refuses the request.
	Publish func() error
}

// TemplateUpdate is a cluster template PATCH after the body checks.
type TemplateUpdate struct {
	// Ident is the template's UUID or name as given in the path.
	Ident string
	// Apply applies the patch to a template's attribute dictionary and
	// returns the patched dictionary (JSON-like values).
	Apply func(doc map[string]any) (map[string]any, error)
	// Coerce checks a patched dictionary the way Magnum's decorators do
	// when they build a template object from it (field coercion), before
	// the policy checks; nil skips it.
	Coerce func(doc map[string]any) error
	// Build turns a patched dictionary into template values, with the API
	// type's field validation; it returns the new values.
	Build func(doc map[string]any) (*magnum.ClusterTemplate, error)
	// AllProjects evaluates the admin rule
	// clustertemplate:update_all_projects after the decorator checks and
	// reports whether the lookup spans every project.
	AllProjects func() (bool, error)
	// Authorize evaluates clustertemplate:update with the template.
	Authorize func(t *magnum.ClusterTemplate) error
	// Publish evaluates clustertemplate:publish when public or hidden
	// changes.
	Publish func() error
}

// CheckTemplateCOE is Magnum's COE validator lookup: only kubernetes is
// supported. coe is the attribute's Python rendering ("Unset", "None" or
// the value).
func CheckTemplateCOE(coe string) error {
	if coe != string(magnum.COEKubernetes) {
		return magnum.UnsupportedCOE(coe)
	}
	return nil
}

// networkDriverSettings returns the allowed list and the default network
// driver, with Magnum's defaults when unset.
func (c *Conductor) networkDriverSettings() ([]string, string) {
	allowed := c.Settings.KubernetesAllowedNetworkDrivers
	if allowed == nil {
		allowed = []string{"flannel", "calico"}
	}
	def := c.Settings.KubernetesDefaultNetworkDriver
	if def == "" {
		def = "flannel"
	}
	return allowed, def
}

// checkNetworkDriver fills the default driver when driver is empty and
// validates it (supported list, then the configured allowed list unless
// it holds "all"). It returns the driver in effect.
func (c *Conductor) checkNetworkDriver(driver string) (string, error) {
	allowed, def := c.networkDriverSettings()
	if driver == "" {
		driver = def
	}
	if !slices.Contains(supportedNetworkDrivers, driver) {
		return "", magnum.NetworkDriverNotSupported(driver, supportedNetworkDrivers)
	}
	if !slices.Contains(allowed, "all") && !slices.Contains(allowed, driver) {
		return "", magnum.NetworkDriverNotAllowed(driver, allowed)
	}
	return driver, nil
}

// checkVolumeDriver validates a volume driver when one is set.
func checkVolumeDriver(driver *string) error {
	if driver == nil || *driver == "" {
		return nil
	}
	if !slices.Contains(supportedVolumeDrivers, *driver) {
		return magnum.VolumeDriverNotSupported(*driver, supportedVolumeDrivers)
	}
	return nil
}

// checkServerType validates a template's server type (nil renders None).
func checkServerType(st *string) error {
	if st == nil {
		return magnum.ServerTypeNotSupported("None", supportedServerTypes)
	}
	if !slices.Contains(supportedServerTypes, *st) {
		return magnum.ServerTypeNotSupported(*st, supportedServerTypes)
	}
	return nil
}

// imageLookupSwallowed reports whether an image lookup error is one that
// Magnum's enforce_driver_supported ignores (anything but not-found and
// forbidden).
func imageLookupSwallowed(err error) bool {
	var me *magnum.Error
	if errors.As(err, &me) && (me.Kind == "ImageNotFound" || me.Kind == "ImageNotAuthorized") {
		return false
	}
	return true
}

// validateImage is attr_validator.validate_image: the image must exist,
// be unique and carry os_distro.
func (c *Conductor) validateImage(ctx context.Context, image *string) (openstack.Image, error) {
	if image == nil {
		// Magnum looks up None and finds no os_distro.
		return openstack.Image{}, magnum.OSDistroFieldNotFound("None")
	}
	if c.OpenStack == nil {
		return openstack.Image{OSDistro: "", Name: *image}, nil
	}
	img, err := c.OpenStack.Image(ctx, *image)
	if err != nil {
		return openstack.Image{}, err
	}
	if img.OSDistro == "" {
		return openstack.Image{}, magnum.OSDistroFieldNotFound(*image)
	}
	return img, nil
}

// validateOSResources is attr_validator.validate_os_resources for a
// template: image, flavors, external and fixed networks, fixed subnet, for
// the attributes that are set (keypairs are not checked).
func (c *Conductor) validateOSResources(ctx context.Context, t *magnum.ClusterTemplate) error {
	if c.OpenStack == nil {
		return nil
	}
	if t.ImageID != nil {
		if _, err := c.validateImage(ctx, t.ImageID); err != nil {
			return err
		}
	}
	for _, f := range []*string{t.FlavorID, t.MasterFlavorID} {
		if f != nil {
			if _, err := c.OpenStack.Flavor(ctx, *f); err != nil {
				return err
			}
		}
	}
	if t.ExternalNetworkID != nil {
		if _, err := c.OpenStack.ExternalNetwork(ctx, *t.ExternalNetworkID); err != nil {
			return err
		}
	}
	if t.FixedNetwork != nil {
		if _, err := c.OpenStack.FixedNetwork(ctx, *t.FixedNetwork); err != nil {
			return err
		}
	}
	if t.FixedSubnet != nil {
		if _, err := c.OpenStack.FixedSubnet(ctx, *t.FixedSubnet); err != nil {
			return err
		}
	}
	return nil
}

// bootVolumeSize returns the boot_volume_size label as an integer, or the
// configured default.
func bootVolumeSize(labels map[string]string) (int, error) {
	v, ok := labels["boot_volume_size"]
	if !ok {
		return defaultBootVolumeSize, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		// Deviation: Magnum fails with an unhandled 500 carrying the same
		// message.
		return 0, errBootVolumeSizeNotInteger()
	}
	return n, nil
}

// errBootVolumeSizeNotInteger is oslo.utils' validate_integer message for
// the boot_volume_size label (not in the error catalogue).
func errBootVolumeSizeNotInteger() *magnum.Error {
	return magnum.InvalidParameterValue("boot_volume_size must be an integer")
}

// validateFlavorRootVolume is attr_validator.validate_flavor_root_volume_size:
// with a zero boot volume size the flavor must exist and have a root disk.
func (c *Conductor) validateFlavorRootVolume(ctx context.Context, flavor *string, bootSize int) error {
	if bootSize > 0 || c.OpenStack == nil {
		return nil
	}
	if flavor == nil {
		return magnum.FlavorNotFound("None")
	}
	f, err := c.OpenStack.Flavor(ctx, *flavor)
	if err != nil {
		return err
	}
	if f.Disk == 0 && bootSize == 0 {
		return magnum.FlavorZeroRootVolumeNotSupported()
	}
	return nil
}

// greekLetters are the first halves of generated template names.
var greekLetters = []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota",
	"kappa", "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi",
	"psi", "omega"}

// generateTemplateName returns "<greek letter>-<1..24>-template".
func generateTemplateName() string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-template", greekLetters[int(b[0])%len(greekLetters)], int(b[1])%24+1)
}

func strOr(p *string, def string) string {
	if p == nil {
		return def
	}
	return *p
}

// CreateClusterTemplate is the POST of a cluster template (logic.md §2):
// Magnum's decorators (COE and server type, network driver with its
// default, volume driver, devicemapper volume size, driver and distro
// resolution), then in.Authorize, the OpenStack resource checks, the
// distro from the image, the driver fallback, the caller's project and
// user, in.Publish for public or hidden templates, the root-disk checks,
// the generated name, and the insert (a used uuid → 409).
func (c *Conductor) CreateClusterTemplate(ctx context.Context, rc *magnum.RequestContext, in TemplateCreate) (*magnum.ClusterTemplate, error) {
	t := in.Template
	has := in.Has
	// enforce_server_type
	coe := "Unset"
	if has["coe"] {
		coe = strOr(t.COE, "None")
	}
	if err := CheckTemplateCOE(coe); err != nil {
		return nil, err
	}
	if err := checkServerType(t.ServerType); err != nil {
		return nil, err
	}
	// enforce_network_driver_types_create
	nd, err := c.checkNetworkDriver(strOr(t.NetworkDriver, ""))
	if err != nil {
		return nil, err
	}
	t.NetworkDriver = &nd
	// enforce_volume_driver_types_create
	if err := checkVolumeDriver(t.VolumeDriver); err != nil {
		return nil, err
	}
	// enforce_volume_storage_size_create
	if t.DockerStorageDriver != nil && *t.DockerStorageDriver == "devicemapper" {
		if t.DockerVolumeSize == nil || *t.DockerVolumeSize < 3 {
			return nil, magnum.DevicemapperVolumeSize(t.DockerVolumeSize)
		}
	}
	// enforce_driver_supported
	distro := strOr(t.ClusterDistro, "")
	reqDriver := strOr(t.Driver, "")
	imageDriver := ""
	if distro == "" || reqDriver == "" {
		if t.ImageID != nil && c.OpenStack != nil {
			img, err := c.OpenStack.Image(ctx, *t.ImageID)
			switch {
			case err == nil:
				distro = img.OSDistro
				imageDriver = img.MagnumDriver
			case !imageLookupSwallowed(err):
				return nil, err
			}
		}
		if distro == "" {
			return nil, magnum.OSDistroFieldNotFound(strOr(t.ImageID, "None"))
		}
	}
	if c.Drivers != nil {
		name, err := driver.ResolveTemplateDriver(c.Drivers, driver.TemplateDriverInput{
			ServerType: strOr(t.ServerType, ""), ClusterDistro: distro, COE: strOr(t.COE, ""),
			RequestDriver: reqDriver, ImageDriver: imageDriver,
		})
		if err != nil {
			return nil, err
		}
		if name != "" {
			t.Driver = &name
		}
	} else if reqDriver == "" && imageDriver != "" {
		t.Driver = &imageDriver
	}
	// Handler.
	if in.Authorize != nil {
		if err := in.Authorize(); err != nil {
			return nil, err
		}
	}
	if err := c.validateOSResources(ctx, &t); err != nil {
		return nil, err
	}
	img, err := c.validateImage(ctx, t.ImageID)
	if err != nil {
		return nil, err
	}
	if img.OSDistro != "" {
		d := img.OSDistro
		t.ClusterDistro = &d
	}
	if t.Driver == nil || *t.Driver == "" {
		name := img.MagnumDriver
		if name == "" && c.Drivers != nil {
			if name, err = c.Drivers.DefaultName(); err != nil {
				return nil, err
			}
		}
		if name != "" {
			t.Driver = &name
		}
	}
	if rc != nil {
		t.ProjectID, t.UserID = rc.ProjectID, rc.UserID
	}
	if (t.Public != nil && *t.Public) || (t.Hidden != nil && *t.Hidden) {
		if in.Publish != nil {
			if err := in.Publish(); err != nil {
				return nil, err
			}
		}
	}
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	if has["flavor_id"] || has["master_flavor_id"] {
		size, err := bootVolumeSize(t.Labels)
		if err != nil {
			return nil, err
		}
		if has["flavor_id"] {
			if err := c.validateFlavorRootVolume(ctx, t.FlavorID, size); err != nil {
				return nil, err
			}
		}
		if has["master_flavor_id"] {
			if err := c.validateFlavorRootVolume(ctx, t.MasterFlavorID, size); err != nil {
				return nil, err
			}
		}
	}
	if t.Name == "" {
		t.Name = generateTemplateName()
	}
	if t.UUID == "" {
		t.UUID = c.newUUID()
	}
	t.CreatedAt = c.now()
	t.UpdatedAt = nil
	err = c.DB.InTx(ctx, func(tx *db.Tx) error {
		return tx.CreateClusterTemplate(ctx, &t)
	})
	if errors.Is(err, db.ErrDuplicate) {
		return nil, magnum.ClusterTemplateAlreadyExists(t.UUID)
	}
	if err != nil {
		return nil, fmt.Errorf("create cluster template: %w", err)
	}
	return &t, nil
}

// TemplateDoc returns the attribute dictionary of a template as Magnum's
// ClusterTemplate.as_dict() has it (every object field, JSON-like values:
// strings, int64, bool, map[string]any for labels, nil for NULL). It is
// the document a PATCH is applied to and the target of the template's
// policy rules.
func TemplateDoc(t *magnum.ClusterTemplate) map[string]any {
	s := func(p *string) any {
		if p == nil {
			return nil
		}
		return *p
	}
	i := func(p *int) any {
		if p == nil {
			return nil
		}
		return int64(*p)
	}
	b := func(p *bool) any {
		if p == nil {
			return nil
		}
		return *p
	}
	labels := map[string]any{}
	for k, v := range t.Labels {
		labels[k] = v
	}
	var updated any
	if t.UpdatedAt != nil {
		updated = t.UpdatedAt.UTC().Format(time.RFC3339Nano)
	}
	return map[string]any{
		"id": t.ID, "uuid": t.UUID, "project_id": t.ProjectID, "user_id": t.UserID, "name": t.Name,
		"image_id": s(t.ImageID), "flavor_id": s(t.FlavorID), "master_flavor_id": s(t.MasterFlavorID),
		"keypair_id": s(t.KeypairID), "dns_nameserver": s(t.DNSNameserver),
		"external_network_id": s(t.ExternalNetworkID), "fixed_network": s(t.FixedNetwork),
		"fixed_subnet": s(t.FixedSubnet), "network_driver": s(t.NetworkDriver), "volume_driver": s(t.VolumeDriver),
		"apiserver_port": i(t.APIServerPort), "docker_volume_size": i(t.DockerVolumeSize),
		"docker_storage_driver": s(t.DockerStorageDriver), "cluster_distro": s(t.ClusterDistro), "coe": s(t.COE),
		"http_proxy": s(t.HTTPProxy), "https_proxy": s(t.HTTPSProxy), "no_proxy": s(t.NoProxy),
		"registry_enabled": b(t.RegistryEnabled), "labels": labels, "tls_disabled": b(t.TLSDisabled),
		"public": b(t.Public), "server_type": s(t.ServerType), "insecure_registry": s(t.InsecureRegistry),
		"master_lb_enabled": b(t.MasterLBEnabled), "floating_ip_enabled": b(t.FloatingIPEnabled),
		"hidden": b(t.Hidden), "tags": s(t.Tags), "driver": s(t.Driver),
		"created_at": t.CreatedAt.UTC().Format(time.RFC3339Nano), "updated_at": updated,
	}
}

// templateColumns lists the API-visible template columns with a
// comparable rendering of their value (nil for NULL).
var templateColumns = []struct {
	name string
	get  func(t *magnum.ClusterTemplate) any
}{
	{"name", func(t *magnum.ClusterTemplate) any { return t.Name }},
	{"image_id", func(t *magnum.ClusterTemplate) any { return derefS(t.ImageID) }},
	{"flavor_id", func(t *magnum.ClusterTemplate) any { return derefS(t.FlavorID) }},
	{"master_flavor_id", func(t *magnum.ClusterTemplate) any { return derefS(t.MasterFlavorID) }},
	{"keypair_id", func(t *magnum.ClusterTemplate) any { return derefS(t.KeypairID) }},
	{"dns_nameserver", func(t *magnum.ClusterTemplate) any { return derefS(t.DNSNameserver) }},
	{"external_network_id", func(t *magnum.ClusterTemplate) any { return derefS(t.ExternalNetworkID) }},
	{"fixed_network", func(t *magnum.ClusterTemplate) any { return derefS(t.FixedNetwork) }},
	{"fixed_subnet", func(t *magnum.ClusterTemplate) any { return derefS(t.FixedSubnet) }},
	{"network_driver", func(t *magnum.ClusterTemplate) any { return derefS(t.NetworkDriver) }},
	{"volume_driver", func(t *magnum.ClusterTemplate) any { return derefS(t.VolumeDriver) }},
	{"apiserver_port", func(t *magnum.ClusterTemplate) any { return derefI(t.APIServerPort) }},
	{"docker_volume_size", func(t *magnum.ClusterTemplate) any { return derefI(t.DockerVolumeSize) }},
	{"docker_storage_driver", func(t *magnum.ClusterTemplate) any { return derefS(t.DockerStorageDriver) }},
	{"cluster_distro", func(t *magnum.ClusterTemplate) any { return derefS(t.ClusterDistro) }},
	{"coe", func(t *magnum.ClusterTemplate) any { return derefS(t.COE) }},
	{"http_proxy", func(t *magnum.ClusterTemplate) any { return derefS(t.HTTPProxy) }},
	{"https_proxy", func(t *magnum.ClusterTemplate) any { return derefS(t.HTTPSProxy) }},
	{"no_proxy", func(t *magnum.ClusterTemplate) any { return derefS(t.NoProxy) }},
	{"registry_enabled", func(t *magnum.ClusterTemplate) any { return derefB(t.RegistryEnabled) }},
	{"labels", func(t *magnum.ClusterTemplate) any { return labelsKey(t.Labels) }},
	{"tls_disabled", func(t *magnum.ClusterTemplate) any { return derefB(t.TLSDisabled) }},
	{"public", func(t *magnum.ClusterTemplate) any { return derefB(t.Public) }},
	{"server_type", func(t *magnum.ClusterTemplate) any { return derefS(t.ServerType) }},
	{"insecure_registry", func(t *magnum.ClusterTemplate) any { return derefS(t.InsecureRegistry) }},
	{"master_lb_enabled", func(t *magnum.ClusterTemplate) any { return derefB(t.MasterLBEnabled) }},
	{"floating_ip_enabled", func(t *magnum.ClusterTemplate) any { return derefB(t.FloatingIPEnabled) }},
	{"hidden", func(t *magnum.ClusterTemplate) any { return derefB(t.Hidden) }},
	{"tags", func(t *magnum.ClusterTemplate) any { return derefS(t.Tags) }},
	{"driver", func(t *magnum.ClusterTemplate) any { return derefS(t.Driver) }},
}

func derefS(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func derefI(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func derefB(p *bool) any {
	if p == nil {
		return nil
	}
	return *p
}

// labelsKey renders labels comparably (NULL and {} are the same: the
// column reads back as {}).
func labelsKey(m map[string]string) any {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%q=%q;", k, m[k])
	}
	return b.String()
}

// changedTemplateColumns returns the columns whose value differs.
func changedTemplateColumns(old, upd *magnum.ClusterTemplate) []string {
	var out []string
	for _, col := range templateColumns {
		if col.get(old) != col.get(upd) {
			out = append(out, col.name)
		}
	}
	return out
}

// publishingOnly is Magnum's exception to the in-use rule: exactly one
// change, which is public set to true, hidden, or a non-null tags; or
// exactly the name.
func publishingOnly(changed []string, upd *magnum.ClusterTemplate) bool {
	if len(changed) != 1 {
		return false
	}
	switch changed[0] {
	case "name", "hidden":
		return true
	case "public":
		return upd.Public != nil && *upd.Public
	case "tags":
		return upd.Tags != nil
	}
	return false
}

// UpdateClusterTemplate is the PATCH of a cluster template (patch.md §4):
// the decorators look the template up with the caller's own scope, apply
// the patch and check the network and volume drivers; then the handler
// asks in.AllProjects (admin rule), looks the template up again,
// authorizes, applies and builds the new values, checks the OpenStack
// resources, the publish rule and the root disks, and saves the changed
// columns unless clusters use the template (400, except for the publishing
// and renaming changes).
func (c *Conductor) UpdateClusterTemplate(ctx context.Context, rc *magnum.RequestContext, in TemplateUpdate) (*magnum.ClusterTemplate, error) {
	// Decorators.
	cur, err := c.GetClusterTemplate(ctx, in.Ident, c.TemplateScopeFor(rc, false))
	if err != nil {
		return nil, err
	}
	doc, err := in.Apply(TemplateDoc(cur))
	if err != nil {
		return nil, err
	}
	if in.Coerce != nil {
		if err := in.Coerce(doc); err != nil {
			return nil, err
		}
	}
	coe := "None"
	if v, ok := doc["coe"]; ok && v != nil {
		coe = magnum.PyStr(v)
	}
	if err := CheckTemplateCOE(coe); err != nil {
		return nil, err
	}
	nd, _ := doc["network_driver"].(string)
	if _, err := c.checkNetworkDriver(nd); err != nil {
		return nil, err
	}
	if vd, ok := doc["volume_driver"].(string); ok && vd != "" {
		if err := checkVolumeDriver(&vd); err != nil {
			return nil, err
		}
	}
	// Handler.
	all := false
	if in.AllProjects != nil {
		if all, err = in.AllProjects(); err != nil {
			return nil, err
		}
	}
	old, err := c.GetClusterTemplate(ctx, in.Ident, c.TemplateScopeFor(rc, all))
	if err != nil {
		return nil, err
	}
	if in.Authorize != nil {
		if err := in.Authorize(old); err != nil {
			return nil, err
		}
	}
	doc, err = in.Apply(TemplateDoc(old))
	if err != nil {
		return nil, err
	}
	upd, err := in.Build(doc)
	if err != nil {
		return nil, err
	}
	upd.ID, upd.UUID, upd.ProjectID, upd.UserID = old.ID, old.UUID, old.ProjectID, old.UserID
	upd.CreatedAt, upd.UpdatedAt = old.CreatedAt, old.UpdatedAt
	if err := c.validateOSResources(ctx, upd); err != nil {
		return nil, err
	}
	if derefB(old.Public) != derefB(upd.Public) || derefB(old.Hidden) != derefB(upd.Hidden) {
		if in.Publish != nil {
			if err := in.Publish(); err != nil {
				return nil, err
			}
		}
	}
	size, err := bootVolumeSize(old.Labels)
	if err != nil {
		return nil, err
	}
	if err := c.validateFlavorRootVolume(ctx, upd.FlavorID, size); err != nil {
		return nil, err
	}
	if err := c.validateFlavorRootVolume(ctx, upd.MasterFlavorID, size); err != nil {
		return nil, err
	}
	changed := changedTemplateColumns(old, upd)
	if upd.Labels == nil {
		upd.Labels = map[string]string{}
	}
	err = c.DB.InTx(ctx, func(tx *db.Tx) error {
		q := tx.ForUpdate()
		row, err := q.GetClusterTemplateByUUID(ctx, old.UUID, db.TemplateScope{Scope: db.AllProjects})
		if errors.Is(err, db.ErrNotFound) {
			return magnum.ClusterTemplateNotFound(in.Ident)
		}
		if err != nil {
			return err
		}
		inUse, err := q.ClusterTemplateInUse(ctx, row.UUID)
		if err != nil {
			return err
		}
		if inUse && !publishingOnly(changed, upd) {
			return magnum.ClusterTemplateReferenced(in.Ident)
		}
		if len(changed) == 0 {
			*upd = *row
			return nil
		}
		if err := q.UpdateClusterTemplate(ctx, upd, changed...); err != nil {
			return err
		}
		// Magnum answers with the object it saved, which is not read
		// back: updated_at is still the value before this update.
		upd.UpdatedAt = row.UpdatedAt
		return nil
	})
	if err != nil {
		var me *magnum.Error
		if errors.As(err, &me) {
			return nil, me
		}
		return nil, fmt.Errorf("update cluster template %s: %w", old.UUID, err)
	}
	return upd, nil
}

// DeleteClusterTemplate deletes t (already looked up and authorized as
// ident) unless a cluster of any project uses it (400
// ClusterTemplateReferenced naming ident).
func (c *Conductor) DeleteClusterTemplate(ctx context.Context, ident string, t *magnum.ClusterTemplate) error {
	err := c.DB.InTx(ctx, func(tx *db.Tx) error {
		inUse, err := tx.ClusterTemplateInUse(ctx, t.UUID)
		if err != nil {
			return err
		}
		if inUse {
			return magnum.ClusterTemplateReferenced(ident)
		}
		if err := tx.DeleteClusterTemplate(ctx, t.UUID); errors.Is(err, db.ErrNotFound) {
			return magnum.ClusterTemplateNotFound(ident)
		} else if err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		var me *magnum.Error
		if errors.As(err, &me) {
			return me
		}
		return fmt.Errorf("delete cluster template %s: %w", t.UUID, err)
	}
	return nil
}

// ListClusterTemplates returns one page of the templates visible in
// scope. marker ("" for none) must be a visible template's uuid (404
// otherwise); sortKey must be a column (400 otherwise); sortDir is "asc"
// or "desc"; limit 0 means no limit.
func (c *Conductor) ListClusterTemplates(ctx context.Context, scope db.TemplateScope, marker string, limit int, sortKey, sortDir string) ([]magnum.ClusterTemplate, error) {
	if marker != "" {
		if _, err := c.DB.GetClusterTemplateByUUID(ctx, marker, scope); errors.Is(err, db.ErrNotFound) {
			return nil, magnum.ClusterTemplateNotFound(marker)
		} else if err != nil {
			return nil, fmt.Errorf("get cluster template marker %s: %w", marker, err)
		}
	}
	rows, err := c.DB.ListClusterTemplates(ctx, scope, db.ListOptions{Marker: marker, Limit: limit, SortKey: sortKey, SortDir: sortDir})
	var ske *db.InvalidSortKeyError
	switch {
	case errors.As(err, &ske):
		return nil, magnum.InvalidSortKey(ske.Key)
	case errors.Is(err, db.ErrInvalidSortDir):
		return nil, magnum.InvalidSortDir(sortDir)
	case errors.Is(err, db.ErrNotFound):
		return nil, magnum.ClusterTemplateNotFound(marker)
	case err != nil:
		return nil, fmt.Errorf("list cluster templates: %w", err)
	}
	return rows, nil
}
