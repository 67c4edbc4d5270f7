package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/api"
	"github.com/openkeel/openkeel-magnum/internal/auth"
	"github.com/openkeel/openkeel-magnum/internal/certs"
	"github.com/openkeel/openkeel-magnum/internal/conductor"
	"github.com/openkeel/openkeel-magnum/internal/config"
	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/driver/capi"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/openstack"
	"github.com/openkeel/openkeel-magnum/internal/policy"
	"github.com/openkeel/openkeel-magnum/internal/reconcile"
)

// Mode says how the process runs.
type Mode int

const (
	// ModeAPI is `openkeel-magnum api`: configured entirely by the
	// configuration files.
	ModeAPI Mode = iota
	// ModeAllInOne is `openkeel-magnum all-in-one`: the embedded default
	// (SQLite file, fake driver, no Keystone) plus the background work.
	ModeAllInOne
)

// kubeRequestTimeout bounds every request to the management cluster.
const kubeRequestTimeout = 30 * time.Second

// AllInOneDatabaseFile is the SQLite file all-in-one uses, in the working
// directory, when [database]/connection is not set.
const AllInOneDatabaseFile = "openkeel-magnum.sqlite"

// ApplyAllInOneDefaults sets what all-in-one implies on top of the files:
// a SQLite database in the working directory unless one is configured, the
// no-auth mode, and the fake driver enabled and used by default.
func ApplyAllInOneDefaults(opts *config.Options) error {
	if opts.Database.Connection == "" {
		path, err := filepath.Abs(AllInOneDatabaseFile)
		if err != nil {
			return err
		}
		opts.Database.Connection = "sqlite:///" + path
	}
	opts.Default.AuthStrategy = "noauth"
	if !contains(opts.Drivers.EnabledBetaDrivers, "fake") {
		opts.Drivers.EnabledBetaDrivers = append(opts.Drivers.EnabledBetaDrivers, "fake")
	}
	if opts.Drivers.DefaultDriver == "" {
		opts.Drivers.DefaultDriver = "fake"
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// poolLimits maps SQLAlchemy's pool options to database/sql's: a pool of
// maxPoolSize kept connections that may open maxOverflow more under load
// (-1: without bound) is at most maxPoolSize+maxOverflow open connections,
// maxPoolSize of them idle. Zero results keep db.Options' defaults.
func poolLimits(maxPoolSize, maxOverflow int) (open, idle int) {
	if maxPoolSize <= 0 {
		return 0, 0
	}
	if maxOverflow < 0 {
		return math.MaxInt32, maxPoolSize
	}
	return maxPoolSize + maxOverflow, maxPoolSize
}

// OpenDatabase connects to [database]/connection. The error names the
// database (password masked) and the cause on one line.
func OpenDatabase(ctx context.Context, opts *config.Options) (*db.DB, error) {
	if opts.Database.Connection == "" {
		return nil, errors.New("[database]/connection is not set")
	}
	target, err := opts.DatabaseTarget()
	if err != nil {
		return nil, err
	}
	dbo := db.Options{}
	dbo.MaxOpenConns, dbo.MaxIdleConns = poolLimits(opts.Database.MaxPoolSize, opts.Database.MaxOverflow)
	if opts.Database.ConnectionRecycleTime > 0 {
		dbo.ConnMaxLifetime = time.Duration(opts.Database.ConnectionRecycleTime) * time.Second
	}
	if opts.Database.DBMaxRetries > 0 {
		dbo.MaxAttempts = opts.Database.DBMaxRetries + 1
	}
	d, err := db.Open(ctx, target.Dialect, target.DSN, dbo)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", target.Redacted, err)
	}
	return d, nil
}

// CheckSchema refuses to serve a database whose schema is not ours at the
// latest version, with the command that fixes it.
func CheckSchema(ctx context.Context, d *db.DB) error {
	ours, alembic, err := d.Version(ctx)
	if err != nil {
		return fmt.Errorf("read the schema version: %w", err)
	}
	switch {
	case ours == 0 && alembic != "":
		return fmt.Errorf("the database is a Magnum database (Alembic %s) not yet adopted: run `openkeel-magnum db adopt`", alembic)
	case ours == 0:
		return errors.New("the database has no schema: run `openkeel-magnum db upgrade`")
	case ours < db.LatestVersion():
		return fmt.Errorf("the database schema is at version %d, this release needs %d: run `openkeel-magnum db upgrade`", ours, db.LatestVersion())
	case ours > db.LatestVersion():
		return fmt.Errorf("the database schema is at version %d, newer than this release knows (%d)", ours, db.LatestVersion())
	}
	return nil
}

// NewAuthenticator returns the Authenticator [DEFAULT]/auth_strategy asks
// for. With Keystone, it checks that the service can obtain its own token,
// so a wrong URL or password fails at start.
func NewAuthenticator(ctx context.Context, opts *config.Options) (api.Authenticator, error) {
	switch opts.Default.AuthStrategy {
	case "noauth":
		return auth.NewNoAuth(), nil
	case "", "keystone":
	default:
		return nil, fmt.Errorf("invalid value for [DEFAULT]/auth_strategy: %q (keystone or noauth)", opts.Default.AuthStrategy)
	}
	ka := opts.KeystoneAuthtoken
	ko := auth.KeystoneOptions{
		AuthURL:            ka.AuthURL,
		WWWAuthenticateURI: ka.WWWAuthenticateURI,
		Username:           ka.Username,
		Password:           ka.Password,
		ProjectName:        ka.ProjectName,
		ProjectID:          ka.ProjectID,
		UserDomainName:     ka.UserDomainName,
		UserDomainID:       ka.UserDomainID,
		ProjectDomainName:  ka.ProjectDomainName,
		ProjectDomainID:    ka.ProjectDomainID,
		CAFile:             ka.CAFile,
		Insecure:           ka.Insecure,
	}
	if ka.AuthURL == "" && ka.WWWAuthenticateURI != "" {
		ko.AuthURL = ka.WWWAuthenticateURI
	}
	switch {
	case ka.TokenCacheTime < 0:
		ko.TokenCacheTime = -1
	case ka.TokenCacheTime > 0:
		ko.TokenCacheTime = time.Duration(ka.TokenCacheTime) * time.Second
	}
	if ka.HTTPConnectTimeout > 0 {
		ko.Timeout = time.Duration(ka.HTTPConnectTimeout) * time.Second
	}
	k, err := auth.NewKeystone(ko)
	if err != nil {
		return nil, fmt.Errorf("[keystone_authtoken]: %w", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := k.Check(cctx); err != nil {
		return nil, err
	}
	return k, nil
}

// NewPolicy loads the default rules and the [oslo_policy] overrides.
func NewPolicy(opts *config.Options, log *slog.Logger) (*policy.Enforcer, error) {
	po := opts.OsloPolicy
	file := po.PolicyFile
	optional := false
	if file == "" || file == "policy.yaml" || file == "policy.json" {
		// oslo.config searches the default name next to the config files
		// and in /etc/magnum; a missing default file means no overrides.
		optional = true
		if file == "" {
			file = "policy.yaml"
		}
		file = findPolicyFile(file, opts.Files)
	}
	return policy.New(policy.Options{
		PolicyFile:         file,
		PolicyFileOptional: optional,
		PolicyDirs:         po.PolicyDirs,
		EnforceNewDefaults: po.EnforceNewDefaults,
		EnforceScope:       enforceScope(opts),
		Logger:             log,
	})
}

func enforceScope(opts *config.Options) bool {
	v, ok := opts.Lookup("oslo_policy", "enforce_scope")
	if !ok {
		return false
	}
	b, err := strconv.ParseBool(v)
	return err == nil && b
}

// findPolicyFile searches a relative policy file the way oslo.config finds
// files: next to each configuration file, then in the usual directories.
func findPolicyFile(name string, configFiles []string) string {
	if filepath.IsAbs(name) {
		return name
	}
	var dirs []string
	for _, f := range configFiles {
		dirs = append(dirs, filepath.Dir(f))
	}
	dirs = append(dirs, ".", "/etc/magnum")
	for _, dir := range dirs {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return name
}

// NewDrivers returns the driver registry that [drivers] selects among the
// installed drivers and extra (the Cluster API entry points, see
// CAPIDrivers).
func NewDrivers(opts *config.Options, extra ...driver.Driver) *driver.Registry {
	sel := driver.Selection{
		Disabled:    opts.Drivers.DisabledDrivers,
		EnabledBeta: opts.Drivers.EnabledBetaDrivers,
		Default:     opts.Drivers.DefaultDriver,
	}
	if len(extra) == 0 {
		return driver.Installed(sel)
	}
	return driver.NewRegistry(sel, append(driver.Registered(), extra...)...)
}

// Service is a wired API server.
type Service struct {
	Opts      *config.Options
	DB        *db.DB
	Handler   http.Handler
	Log       *slog.Logger
	Conductor *conductor.Conductor
	mode      Mode
}

// New wires the API handler over an open database.
func New(ctx context.Context, opts *config.Options, mode Mode, d *db.DB, log *slog.Logger) (*Service, error) {
	authn, err := NewAuthenticator(ctx, opts)
	if err != nil {
		return nil, err
	}
	pol, err := NewPolicy(opts, log)
	if err != nil {
		return nil, err
	}
	cors := api.DefaultCORSOptions()
	c := opts.CORS
	cors.AllowedOrigin = c.AllowedOrigin
	cors.AllowCredentials = c.AllowCredentials
	if c.ExposeHeaders != nil {
		cors.ExposeHeaders = c.ExposeHeaders
	}
	if c.AllowMethods != nil {
		cors.AllowMethods = c.AllowMethods
	}
	if c.AllowHeaders != nil {
		cors.AllowHeaders = c.AllowHeaders
	}
	cors.MaxAge = c.MaxAge
	hcFile, _ := opts.Lookup("healthcheck", "disable_by_file_path")
	cond, err := NewConductor(opts, mode, d, log)
	if err != nil {
		return nil, err
	}
	cond.StartCreateJobs(0) // stopped by Serve
	h := api.New(api.Options{
		Auth:                   authn,
		Policy:                 policyAdapter{pol},
		MaxLimit:               opts.API.MaxLimit,
		CORS:                   cors,
		ProxyHeaders:           opts.OsloMiddleware.EnableProxyHeadersParsing,
		WWWAuthenticateURI:     opts.KeystoneAuthtoken.WWWAuthenticateURI,
		Logger:                 log,
		HealthcheckDisableFile: hcFile,
		ServiceDownTime:        time.Duration(opts.Default.ServiceDownTime) * time.Second,
		MServices:              mservices{d},
		Conductor:              cond,
	})
	return &Service{Opts: opts, DB: d, Handler: h, Log: log, Conductor: cond, mode: mode}, nil
}

// NewConductor wires the use cases: the database, the driver registry, the
// OpenStack lookups (built-in data in all-in-one, the user's catalog
// otherwise) and the settings they read.
func NewConductor(opts *config.Options, mode Mode, d *db.DB, log *slog.Logger) (*conductor.Conductor, error) {
	var lookups conductor.OpenStack
	if mode == ModeAllInOne {
		// Deviation: all-in-one has no Glance/Nova/Neutron; it answers
		// lookups from built-in data and accepts any other name.
		lookups = openstack.NewStatic(true)
	} else {
		ka := opts.KeystoneAuth
		timeout := time.Duration(ka.Timeout) * time.Second
		clients, err := openstack.NewClients(openstack.Options{
			Glance:   openstack.ServiceOptions{RegionName: opts.GlanceClient.RegionName, EndpointType: opts.GlanceClient.EndpointType},
			Nova:     openstack.ServiceOptions{RegionName: opts.NovaClient.RegionName, EndpointType: opts.NovaClient.EndpointType},
			Neutron:  openstack.ServiceOptions{RegionName: opts.NeutronClient.RegionName, EndpointType: opts.NeutronClient.EndpointType},
			Timeout:  timeout,
			CAFile:   ka.CAFile,
			CertFile: ka.CertFile,
			KeyFile:  ka.KeyFile,
			Insecure: ka.Insecure,
		})
		if err != nil {
			return nil, fmt.Errorf("OpenStack clients: %w", err)
		}
		lookups = openstack.NewLookup(clients)
	}
	_, set := opts.Lookup("certificates", "cert_manager_type")
	storeType, warning, err := certs.ResolveStoreType(opts.Certificates.CertManagerType, set)
	if err != nil {
		return nil, err
	}
	if warning != "" && mode != ModeAllInOne {
		log.Warn(warning)
	}
	var store certs.Store
	if storeType == certs.StoreKubernetes {
		kc, err := KubeClient(opts)
		if err != nil {
			return nil, err
		}
		store = capi.NewCertStore(kc, opts.CAPI.Namespace, nil)
	} else {
		store, err = conductor.NewCertStore(d, storeType, nil)
		if err != nil {
			return nil, err
		}
	}
	x := certs.DefaultX509Options()
	x.AllowCA = opts.X509.AllowCA
	if opts.X509.AllowedExtensions != nil {
		x.AllowedExtensions = opts.X509.AllowedExtensions
	}
	if opts.X509.AllowedKeyUsage != nil {
		x.AllowedKeyUsage = opts.X509.AllowedKeyUsage
	}
	if opts.X509.TermOfValidity > 0 {
		x.TermOfValidity = opts.X509.TermOfValidity
	}
	if opts.X509.RSAKeySize > 0 {
		x.RSAKeySize = opts.X509.RSAKeySize
	}
	cond := &conductor.Conductor{
		DB:        d,
		Certs:     store,
		Drivers:   NewDrivers(opts),
		OpenStack: lookups,
		Log:       log,
		Settings: conductor.Settings{
			MaxClustersPerProject:           opts.Quotas.MaxClustersPerProject,
			KubernetesAllowedNetworkDrivers: opts.ClusterTemplate.KubernetesAllowedNetworkDrivers,
			KubernetesDefaultNetworkDriver:  opts.ClusterTemplate.KubernetesDefaultNetworkDriver,
			ServiceDownTime:                 time.Duration(opts.Default.ServiceDownTime) * time.Second,
			X509:                            &x,
		},
	}
	// The Cluster API driver reads the clusters' CAs through the conductor,
	// so its entry points join the registry once the conductor exists.
	extra, err := CAPIDrivers(context.Background(), opts, cond)
	if err != nil {
		return nil, err
	}
	if len(extra) > 0 {
		cond.Drivers = NewDrivers(opts, extra...)
	}
	return cond, nil
}

// policyAdapter lets the api package evaluate rules without importing
// policy's named map types.
type policyAdapter struct{ e *policy.Enforcer }

func (p policyAdapter) Enforce(rule string, target, creds map[string]any) (bool, error) {
	return p.e.Enforce(rule, target, creds)
}

type mservices struct{ d *db.DB }

// ListServices lists the magnum_service rows, without the row that holds
// the reconciler lease: it is a lock, not a service (clients such as
// tempest expect exactly the conductors).
func (m mservices) ListServices(ctx context.Context) ([]magnum.MagnumService, error) {
	rows, err := m.d.ListMagnumServices(ctx)
	if err != nil {
		return nil, err
	}
	out := rows[:0]
	for _, r := range rows {
		if r.Host == conductor.LockServiceHost && r.Binary == conductor.LockServiceBinary {
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// Serve listens on [api]/host:port and serves until ctx is cancelled, then
// shuts down gracefully.
func (s *Service) Serve(ctx context.Context) error {
	addr := net.JoinHostPort(s.Opts.API.Host, strconv.Itoa(s.Opts.API.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s ([api]/host, [api]/port): %w", addr, err)
	}
	srv := &http.Server{
		Handler:           s.Handler,
		ReadHeaderTimeout: 30 * time.Second,
		ReadTimeout:       5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          slog.NewLogLogger(s.Log.Handler(), slog.LevelWarn),
	}
	scheme := "http"
	if s.Opts.API.EnabledSSL {
		scheme = "https"
	}
	s.Log.Info("serving", "url", scheme+"://"+ln.Addr().String())
	errc := make(chan error, 1)
	go func() {
		if s.Opts.API.EnabledSSL {
			errc <- srv.ServeTLS(ln, s.Opts.API.SSLCertFile, s.Opts.API.SSLKeyFile)
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return errors.Join(srv.Shutdown(sctx), s.Conductor.StopCreateJobs(sctx))
}

// StartBackground runs the background work until ctx ends: the conductor
// heartbeat (so `openstack coe service list` shows it) and the status
// reconciler (one active instance at a time, by a database lease).
func (s *Service) StartBackground(ctx context.Context) (wait func()) {
	return StartBackground(ctx, s.Opts, s.mode, s.DB, s.Conductor, s.Log)
}

// StartBackground starts the heartbeat and the reconciler for cond. The
// returned function waits until both have stopped (after ctx ends), so
// that the database is closed only after them.
func StartBackground(ctx context.Context, opts *config.Options, mode Mode, d *db.DB, cond *conductor.Conductor, log *slog.Logger) (wait func()) {
	var wg sync.WaitGroup
	host := startHeartbeat(ctx, &wg, opts, d, log)

	// Magnum polls in-progress clusters every 10 s; all-in-one, whose fake
	// driver completes at once, polls every second so that a developer sees
	// CREATE_COMPLETE without waiting.
	interval := 10 * time.Second
	if mode == ModeAllInOne {
		interval = time.Second
	}
	r := reconcile.New(reconcile.Options{
		Conductor: cond,
		Interval:  interval,
		Holder:    host + "/" + strconv.Itoa(os.Getpid()),
		Log:       log,
		OnDeleted: func(ctx context.Context, cl magnum.Cluster) error {
			return cond.DeleteClusterCertificates(ctx, &cl)
		},
	})
	wg.Go(func() {
		if err := r.Run(ctx); err != nil && ctx.Err() == nil {
			log.Error("reconciler stopped", "error", err)
		}
	})
	return wg.Wait
}

// heartbeatInterval reports well within service_down_time, as Magnum's
// periodic report (every periodic_interval_max, 60 s by default) does.
func heartbeatInterval(opts *config.Options) time.Duration {
	iv := time.Duration(opts.Default.PeriodicIntervalMax) * time.Second
	down := time.Duration(opts.Default.ServiceDownTime) * time.Second
	if iv <= 0 {
		iv = 60 * time.Second
	}
	if down > 0 && iv > down/3 {
		iv = down / 3
	}
	return iv
}

// startHeartbeat reports this process in magnum_service now and then
// periodically on wg until ctx ends; it returns the host name it reports.
func startHeartbeat(ctx context.Context, wg *sync.WaitGroup, opts *config.Options, d *db.DB, log *slog.Logger) string {
	host := opts.Default.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	hb := &conductor.Heartbeat{
		Store:    d,
		Host:     host,
		Binary:   "magnum-conductor",
		Interval: heartbeatInterval(opts),
		Log:      log,
	}
	if err := hb.Report(ctx); err != nil {
		log.Warn("service heartbeat failed", "error", err)
	}
	wg.Go(func() { hb.Run(ctx, false) })
	return host
}
