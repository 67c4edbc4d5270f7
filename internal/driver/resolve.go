package driver

// TemplateDriverInput is what Magnum's enforce_driver_supported decorator
// knows when a cluster template is created
// (magnum/api/validation.py:66).
type TemplateDriverInput struct {
	// ServerType and COE are the template's fields; ClusterDistro is the
	// distro already resolved by the caller (the body's cluster_distro, else
	// the image's os_distro; a missing distro is the caller's 400
	// OSDistroFieldNotFound).
	ServerType, ClusterDistro, COE string
	// RequestDriver is the driver named in the request body ("" if none).
	RequestDriver string
	// ImageDriver is the image property magnum_driver ("" if none, or if the
	// image was not read because the body had both cluster_distro and
	// driver).
	ImageDriver string
}

// ResolveTemplateDriver resolves the driver a new cluster template stores
// (pack § 3.1): the request's driver, else the image's magnum_driver, else
// [drivers]/default_driver (which must name an enabled driver, else 400
// "Cluster driver (<name>) not supported."), else the alphabetically first
// enabled driver. A resolved name must be installed (400
// ClusterDriverNotSupported otherwise); Magnum checks neither that the
// driver provides the tuple nor that a beta driver is enabled in that case.
// When no driver is installed at all, the tuple is checked instead, which
// fails with 400 ClusterTypeNotSupported (or ClusterTypeBetaNotEnabled).
//
// The returned name is what Magnum writes back into the template's driver
// field. The function does no I/O.
func ResolveTemplateDriver(reg *Registry, in TemplateDriverInput) (string, error) {
	name := in.RequestDriver
	if name == "" {
		name = in.ImageDriver
	}
	if name == "" {
		def, err := reg.DefaultName()
		if err != nil {
			return "", err
		}
		name = def
	}
	d, err := reg.Get(in.ServerType, in.ClusterDistro, in.COE, name)
	if err != nil {
		return "", err
	}
	return d.Name(), nil
}

// CheckClusterType is the check Magnum makes before a cluster is created
// (magnum/api/validation.py:51, enforce_cluster_type_supported): some enabled
// driver must provide the template's (server_type, cluster_distro, coe),
// whatever driver the template stores; beta drivers must be enabled.
func CheckClusterType(reg *Registry, serverType, clusterDistro, coe string) error {
	_, err := reg.ForTarget(serverType, clusterDistro, coe)
	return err
}
