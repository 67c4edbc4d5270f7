package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/openkeel/openkeel-magnum/internal/certs"
	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/config"
	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/driver/capi"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/openstack"
	"github.com/openkeel/openkeel-magnum/internal/reconcile"
)

// CAPIDrivers returns the Cluster API driver's entry points
// (k8s_cluster_api_ubuntu, …) when [capi]/enabled is true, nil otherwise.
// The driver reaches the management cluster of [capi], reads the clusters'
// CAs through cond, and creates application credentials and server groups
// with the user's token, deleting them later with the service credentials
// of [keystone_authtoken]. On delete it removes the cluster's Octavia load
// balancers ([octavia_client], [neutron_client]) with the user's token,
// waiting up to [cluster]/pre_delete_lb_timeout. Nothing is contacted here: errors are
// configuration errors, on one line.
func CAPIDrivers(ctx context.Context, opts *config.Options, cond *conductor.Conductor) ([]driver.Driver, error) {
	_ = ctx // nothing is contacted while building
	if !opts.CAPI.Enabled {
		return nil, nil
	}
	if cond == nil {
		return nil, errors.New("[capi]: the Cluster API driver needs a conductor")
	}
	kc, err := KubeClient(opts)
	if err != nil {
		return nil, oneLine(err)
	}
	ka := opts.KeystoneAuthtoken
	authURL := ka.WWWAuthenticateURI
	if authURL == "" {
		authURL = ka.AuthURL
	}
	if authURL == "" {
		return nil, errors.New("[capi]/enabled needs [keystone_authtoken]/www_authenticate_uri or auth_url (the Keystone URL of application credentials)")
	}
	cloud := capi.CloudConfig{AuthURL: authURL, RegionName: ka.RegionName, Insecure: ka.Insecure}
	if ka.CAFile != "" {
		pem, err := os.ReadFile(ka.CAFile)
		if err != nil {
			return nil, oneLine(fmt.Errorf("[keystone_authtoken]/cafile: %w", err))
		}
		cloud.CACert = string(pem)
	}
	var svc *openstack.ServiceAuth
	if ka.AuthURL != "" && ka.Username != "" {
		svc = &openstack.ServiceAuth{
			AuthURL:           ka.AuthURL,
			Username:          ka.Username,
			Password:          ka.Password,
			UserDomainName:    orDefault(ka.UserDomainName, "Default"),
			ProjectName:       ka.ProjectName,
			ProjectDomainName: orDefault(ka.ProjectDomainName, "Default"),
			RegionName:        ka.RegionName,
			Interface:         ka.Interface,
		}
	}
	session := openstack.SessionOptions{CAFile: ka.CAFile, CertFile: ka.CertFile, KeyFile: ka.KeyFile, Insecure: ka.Insecure}
	if ka.HTTPConnectTimeout > 0 {
		session.Timeout = time.Duration(ka.HTTPConnectTimeout) * time.Second
	}
	roles := opts.CAPI.AppCredentialRoles
	if len(roles) == 0 {
		roles = nil // the store's default
	}
	ac, err := openstack.NewAppCredentials(openstack.AppCredentialOptions{
		AuthURL: authURL, Roles: roles, Service: svc, SessionOptions: session,
	})
	if err != nil {
		return nil, oneLine(fmt.Errorf("[capi] application credentials: %w", err))
	}
	sg, err := openstack.NewServerGroups(openstack.ServerGroupOptions{
		Nova:           openstack.ServiceOptions{RegionName: opts.NovaClient.RegionName, EndpointType: opts.NovaClient.EndpointType},
		Service:        svc,
		SessionOptions: session,
	})
	if err != nil {
		return nil, oneLine(fmt.Errorf("[capi] server groups: %w", err))
	}
	lbs, err := openstack.NewLoadBalancers(openstack.LoadBalancerOptions{
		Octavia:        openstack.ServiceOptions{RegionName: opts.OctaviaClient.RegionName, EndpointType: opts.OctaviaClient.EndpointType},
		Neutron:        openstack.ServiceOptions{RegionName: opts.NeutronClient.RegionName, EndpointType: opts.NeutronClient.EndpointType},
		Service:        svc,
		SessionOptions: session,
	})
	if err != nil {
		return nil, oneLine(fmt.Errorf("[capi] load balancers: %w", err))
	}
	vt, err := openstack.NewVolumeTypes(openstack.VolumeTypeOptions{
		Cinder:         openstack.ServiceOptions{RegionName: opts.CinderClient.RegionName, EndpointType: opts.CinderClient.EndpointType},
		Service:        svc,
		SessionOptions: session,
	})
	if err != nil {
		return nil, oneLine(fmt.Errorf("[capi] volume types: %w", err))
	}
	addons, err := addonConfig(opts)
	if err != nil {
		return nil, err
	}
	drv := capi.New(capi.Options{
		Client:                kc,
		Namespace:             opts.CAPI.Namespace,
		CAs:                   conductorCAs(cond),
		AppCredentials:        appCredentials{ac},
		ServerGroups:          serverGroups{sg},
		Resolver:              resolver{cond.OpenStack},
		LoadBalancers:         loadBalancers{lbs},
		PreDeleteLBTimeout:    seconds(opts.Cluster.PreDeleteLBTimeout),
		Cloud:                 cloud,
		Addons:                addons,
		BlockStorage:          volumeTypes{vt},
		DefaultBootVolumeSize: int64(opts.Cinder.DefaultBootVolumeSize),
		DefaultBootVolumeType: opts.Cinder.DefaultBootVolumeType,
		UpdateGrace:           seconds(opts.CAPI.UpdateGrace),
		DeleteTimeout:         seconds(opts.CAPI.DeleteTimeout),
		Timeout:               seconds(opts.CAPI.RequestTimeout),
	})
	return drv.EntryPoints(), nil
}

// addonConfig reads what the add-on Secrets take from the configuration:
// [capi]/addons_manifests_dir, the OpenStack CA of [drivers] and the
// keystone-auth policy file of [kubernetes], which may be absent.
func addonConfig(opts *config.Options) (capi.AddonConfig, error) {
	ac := capi.AddonConfig{ManifestsDir: opts.CAPI.AddonsManifestsDir, InsecureTLS: !opts.Drivers.VerifyCA}
	if f := opts.Drivers.OpenstackCAFile; f != "" {
		pem, err := os.ReadFile(f)
		if err != nil {
			return ac, oneLine(fmt.Errorf("[drivers]/openstack_ca_file: %w", err))
		}
		ac.CACert = string(pem)
	}
	if f := opts.Kubernetes.KeystoneAuthDefaultPolicy; f != "" {
		policy, err := os.ReadFile(f)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return ac, oneLine(fmt.Errorf("[kubernetes]/keystone_auth_default_policy: %w", err))
		default:
			ac.KeystoneAuthPolicy = string(policy)
		}
	}
	return ac, nil
}

// volumeTypes adapts openstack.VolumeTypes to capi.BlockStorage.
type volumeTypes struct{ v *openstack.VolumeTypes }

func (v volumeTypes) VolumeTypes(ctx context.Context, cred driver.Credentials) ([]capi.VolumeType, bool, error) {
	types, ok, err := v.v.List(ctx, caller(cred))
	out := make([]capi.VolumeType, 0, len(types))
	for _, t := range types {
		out = append(out, capi.VolumeType{Name: t.Name, Default: t.Default})
	}
	return out, ok, err
}

// conductorCAs reads a cluster's CAs and admin certificate from the
// conductor's certificate store, keyed as the driver expects.
func conductorCAs(cond *conductor.Conductor) func(context.Context, magnum.Cluster) (map[string]certs.KeyPair, error) {
	return func(ctx context.Context, cl magnum.Cluster) (map[string]certs.KeyPair, error) {
		cc, err := cond.ClusterKeyPairs(ctx, &cl)
		if err != nil {
			return nil, err
		}
		return map[string]certs.KeyPair{
			capi.CAKeyKubernetes: *cc.Kubernetes,
			capi.CAKeyEtcd:       *cc.Etcd,
			capi.CAKeyFrontProxy: *cc.FrontProxy,
			capi.CAKeyAdmin:      *cc.Client,
		}, nil
	}
}

// caller turns the driver's credentials into the stores' caller: the
// periodic poll (Admin, no token) uses the service credentials.
func caller(c driver.Credentials) openstack.Caller {
	return openstack.Caller{
		Token:          c.AuthToken,
		UserID:         c.UserID,
		ProjectID:      c.ProjectID,
		ServiceCatalog: c.ServiceCatalog,
		Service:        c.Admin || c.AuthToken == "",
	}
}

// appCredentials adapts openstack.AppCredentials to capi.AppCredentialStore.
type appCredentials struct{ s *openstack.AppCredentials }

func (a appCredentials) Create(ctx context.Context, cred driver.Credentials, name, description string) (capi.AppCredential, error) {
	c, err := a.s.Create(ctx, caller(cred), name, description)
	if err != nil {
		return capi.AppCredential{}, err
	}
	return capi.AppCredential{ID: c.ID, Secret: c.Secret, Name: c.Name, UserID: c.UserID}, nil
}

func (a appCredentials) Delete(ctx context.Context, userID, id string) error {
	return a.s.Delete(ctx, userID, id)
}

// resolver adapts the conductor's Glance/Nova/Neutron lookups to
// capi.Resolver: the names or IDs stored in the rows become the IDs and
// names CAPO needs, looked up as the caller (Magnum's matching rules and
// errors).
type resolver struct{ os conductor.OpenStack }

// as puts the driver's credentials on ctx as the caller of the lookups.
func (resolver) as(ctx context.Context, c driver.Credentials) context.Context {
	return magnum.WithRequestContext(ctx, &magnum.RequestContext{
		AuthToken: c.AuthToken, UserID: c.UserID, ProjectID: c.ProjectID, ServiceCatalog: c.ServiceCatalog,
		IsAdmin: c.Admin,
	})
}

func (r resolver) FlavorName(ctx context.Context, c driver.Credentials, ref string) (string, error) {
	f, err := r.os.Flavor(r.as(ctx, c), ref)
	if err != nil {
		return "", err
	}
	return f.Name, nil
}

func (r resolver) Image(ctx context.Context, c driver.Credentials, ref string) (capi.Image, error) {
	img, err := r.os.Image(r.as(ctx, c), ref)
	if err != nil {
		return capi.Image{}, err
	}
	return capi.Image{ID: img.ID, DiskBus: img.Properties["hw_disk_bus"]}, nil
}

func (r resolver) NetworkID(ctx context.Context, c driver.Credentials, ref string) (string, error) {
	n, err := r.os.FixedNetwork(r.as(ctx, c), ref)
	if err != nil {
		return "", err
	}
	return n.ID, nil
}

func (r resolver) SubnetID(ctx context.Context, c driver.Credentials, ref string) (string, error) {
	sn, err := r.os.FixedSubnet(r.as(ctx, c), ref)
	if err != nil {
		return "", err
	}
	return sn.ID, nil
}

// serverGroups adapts openstack.ServerGroups to capi.ServerGroups.
type serverGroups struct{ g *openstack.ServerGroups }

func (s serverGroups) Ensure(ctx context.Context, cred driver.Credentials, name, policy string) (string, error) {
	return s.g.Ensure(ctx, caller(cred), name, policy)
}

func (s serverGroups) Delete(ctx context.Context, cred driver.Credentials, name string) error {
	return s.g.Delete(ctx, caller(cred), name)
}

// loadBalancers adapts openstack.LoadBalancers to capi.LoadBalancers: a
// load balancer's delete is the floating IPs of its VIP port, then the
// cascading delete (once Octavia has removed the port, the floating IPs
// can no longer be found by it).
type loadBalancers struct{ l *openstack.LoadBalancers }

func (a loadBalancers) List(ctx context.Context, cred driver.Credentials, projectID string) ([]capi.LoadBalancer, error) {
	found, err := a.l.List(ctx, caller(cred), projectID)
	if errors.Is(err, openstack.ErrNoLoadBalancerService) {
		return nil, capi.ErrNoLoadBalancerService
	}
	if err != nil {
		return nil, err
	}
	out := make([]capi.LoadBalancer, 0, len(found))
	for _, lb := range found {
		out = append(out, capi.LoadBalancer{
			ID: lb.ID, Name: lb.Name, Description: lb.Description, ProjectID: lb.ProjectID,
			ProvisioningStatus: lb.ProvisioningStatus, VIPPortID: lb.VIPPortID,
		})
	}
	return out, nil
}

func (a loadBalancers) Delete(ctx context.Context, cred driver.Credentials, lb capi.LoadBalancer) error {
	if _, err := a.l.DeleteFloatingIPs(ctx, caller(cred), lb.VIPPortID); err != nil {
		return err
	}
	return a.l.Delete(ctx, caller(cred), lb.ID)
}

// KubeRESTConfig returns the connection to the management cluster that
// [capi]/kubeconfig names (the in-cluster service account when empty),
// with [capi]/request_timeout.
func KubeRESTConfig(opts *config.Options) (*rest.Config, error) {
	var (
		cfg *rest.Config
		err error
	)
	if opts.CAPI.Kubeconfig == "" {
		cfg, err = rest.InClusterConfig()
	} else {
		cfg, err = clientcmd.BuildConfigFromFlags("", opts.CAPI.Kubeconfig)
	}
	if err != nil {
		return nil, oneLine(fmt.Errorf("[capi]/kubeconfig: %w", err))
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = seconds(opts.CAPI.RequestTimeout)
		if cfg.Timeout == 0 {
			cfg.Timeout = kubeRequestTimeout
		}
	}
	return cfg, nil
}

// NewCAPIReconciler builds the watch reconciler of the [capi] management
// cluster for cond; it starts nothing.
func NewCAPIReconciler(opts *config.Options, cond *conductor.Conductor, log *slog.Logger) (*reconcile.CAPI, error) {
	// controller-runtime's packages log through its global logger too
	// (warning with a stack trace when it is unset).
	ctrllog.SetLogger(logr.FromSlogHandler(log.Handler()))
	cfg, err := KubeRESTConfig(opts)
	if err != nil {
		return nil, err
	}
	r, err := reconcile.NewCAPI(reconcile.CAPIOptions{
		Conductor:      cond,
		Config:         cfg,
		Namespace:      opts.CAPI.Namespace,
		LeaseNamespace: opts.CAPI.LeaseNamespace,
		LeaseDuration:  seconds(opts.CAPI.LeaseDuration),
		RenewDeadline:  seconds(opts.CAPI.RenewDeadline),
		RetryPeriod:    seconds(opts.CAPI.RetryPeriod),
		ResyncPeriod:   seconds(opts.CAPI.ResyncInterval),
		Holder:         holder(opts),
		Log:            log,
		OnDeleted: func(ctx context.Context, cl magnum.Cluster) error {
			return cond.DeleteClusterCertificates(ctx, &cl)
		},
	})
	if err != nil {
		return nil, oneLine(fmt.Errorf("[capi] reconciler: %w", err))
	}
	return r, nil
}

// StartCAPIBackground is StartBackground with the watch reconciler of the
// management cluster (one active instance at a time, by the Lease) in
// place of the database-polling one. The returned function waits until
// the heartbeat and the reconciler have stopped (after ctx ends).
func StartCAPIBackground(ctx context.Context, opts *config.Options, d *db.DB, cond *conductor.Conductor, log *slog.Logger) (wait func(), err error) {
	r, err := NewCAPIReconciler(opts, cond, log)
	if err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	startHeartbeat(ctx, &wg, opts, d, log)
	wg.Go(func() {
		if err := r.Start(ctx); err != nil && ctx.Err() == nil {
			log.Error("reconciler stopped", "error", err)
		}
	})
	return wg.Wait, nil
}

func holder(opts *config.Options) string {
	host := opts.Default.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	return host + "/" + strconv.Itoa(os.Getpid())
}

func seconds(n int) time.Duration { return time.Duration(n) * time.Second }

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// oneLine folds a multi-line error onto one line.
func oneLine(err error) error {
	msg := err.Error()
	if !strings.ContainsAny(msg, "\r\n") {
		return err
	}
	return errors.New(strings.Join(strings.Fields(msg), " "))
}
