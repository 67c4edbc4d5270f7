package kubetest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	addonsv1 "sigs.k8s.io/cluster-api/api/addons/v1beta2"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Environment variables read by this package.
const (
	// EnvKubeAPIServer names the kube-apiserver binary (read by envtest).
	EnvKubeAPIServer = "TEST_ASSET_KUBE_APISERVER"
	// EnvEtcd names the etcd binary (read by envtest).
	EnvEtcd = "TEST_ASSET_ETCD"
	// EnvAssets names a directory holding both binaries (read by envtest).
	EnvAssets = "KUBEBUILDER_ASSETS"
	// EnvCRDsDir overrides the directory that holds the CRD folders.
	EnvCRDsDir = "OKM_CRDS_DIR"
	// envStartTimeout is envtest's own override of the start timeout.
	envStartTimeout = "KUBEBUILDER_CONTROLPLANE_START_TIMEOUT"
)

// CRD folders under the CRDs directory, one per upstream release.
const (
	// ClusterAPICRDs holds the Cluster API v1.14.0 CRDs (v1beta1 and v1beta2 served).
	ClusterAPICRDs = "cluster-api-v1.14.0"
	// CAPOCRDs holds the Cluster API Provider OpenStack v0.14.7 CRDs (v1beta1 served).
	CAPOCRDs = "cluster-api-provider-openstack-v0.14.7"
)

// modulePath identifies the repository root's go.mod (tools/ has its own).
const modulePath = "github.com/openkeel/openkeel-magnum"

// Timeouts sized for a loaded 2-core machine: kube-apiserver alone takes
// several seconds to become ready there.
const (
	startTimeout = 90 * time.Second
	stopTimeout  = 30 * time.Second
	crdTimeout   = 60 * time.Second
)

// Env is a running etcd and kube-apiserver with the CRDs installed.
type Env struct {
	// Config reaches the API server as a member of system:masters.
	Config *rest.Config
	// Client is a controller-runtime client using Scheme; unstructured
	// objects work for any served kind, including the CAPO ones.
	Client client.Client
	// Scheme knows the client-go, apiextensions/v1 and Cluster API v1beta2 types.
	Scheme *runtime.Scheme
	// KubeConfig is a kubeconfig file's content for Config, for code under
	// test that reads one.
	KubeConfig []byte
	// CRDs are the CRDs that were installed, all established.
	CRDs []*apiextensionsv1.CustomResourceDefinition

	env      *envtest.Environment
	stopOnce sync.Once
	stopErr  error
}

// ErrNotConfigured is returned by Configured and New when no binaries are set
// in the environment.
var ErrNotConfigured = errors.New("kubetest: " + EnvKubeAPIServer + " and " + EnvEtcd +
	" (or " + EnvAssets + ") are not set; run: eval \"$(scripts/ci/kube-apiserver.sh)\"")

// Configured reports whether the binaries are named in the environment: nil
// when they are, ErrNotConfigured when nothing is set, and another error when
// a named binary is missing.
func Configured() error {
	api, etcd, assets := os.Getenv(EnvKubeAPIServer), os.Getenv(EnvEtcd), os.Getenv(EnvAssets)
	if assets != "" {
		return nil
	}
	if api == "" || etcd == "" {
		return ErrNotConfigured
	}
	for _, p := range []string{api, etcd} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("kubetest: %w", err)
		}
	}
	return nil
}

// Start starts an environment for t and stops it when t ends. It skips t
// when the binaries are not configured, or fails it when CI=true.
func Start(t testing.TB) *Env {
	t.Helper()
	SkipIfNotConfigured(t)
	e, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("kubetest: stop: %v", err)
		}
	})
	return e
}

// SkipIfNotConfigured skips t when the binaries are not configured, and fails
// it instead when CI=true.
func SkipIfNotConfigured(t testing.TB) {
	t.Helper()
	err := Configured()
	switch {
	case err == nil:
	case errors.Is(err, ErrNotConfigured) && os.Getenv("CI") != "true":
		t.Skip(err)
	default:
		t.Fatal(err)
	}
}

// New starts etcd and kube-apiserver, installs the CRDs of CRDDirs and waits
// until they are established. The caller must call Stop.
func New() (*Env, error) {
	if err := Configured(); err != nil {
		return nil, err
	}
	dirs, err := CRDDirs()
	if err != nil {
		return nil, err
	}
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	quietLogger()

	env := &envtest.Environment{
		// Scheme stays nil (client-go's): a scheme holding the Cluster API
		// hub types would make envtest point the CRDs at conversion
		// webhooks that no one serves.
		CRDDirectoryPaths:     dirs,
		ErrorIfCRDPathMissing: true,
		CRDInstallOptions: envtest.CRDInstallOptions{
			MaxTime: crdTimeout,
		},
		BinaryAssetsDirectory:   os.Getenv(EnvAssets),
		ControlPlaneStopTimeout: stopTimeout,
	}
	if os.Getenv(envStartTimeout) == "" {
		env.ControlPlaneStartTimeout = startTimeout
	}
	cfg, err := env.Start()
	if err != nil {
		// Start leaves whatever it started running when a later step fails.
		_ = env.Stop()
		return nil, fmt.Errorf("kubetest: start: %w", err)
	}
	cfg.Timeout = 30 * time.Second
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("kubetest: client: %w", err)
	}
	return &Env{
		Config:     cfg,
		Client:     c,
		Scheme:     scheme,
		KubeConfig: env.KubeConfig,
		CRDs:       env.CRDs,
		env:        env,
	}, nil
}

// Stop stops kube-apiserver and etcd and removes their data. It is safe to
// call more than once.
func (e *Env) Stop() error {
	e.stopOnce.Do(func() { e.stopErr = e.env.Stop() })
	return e.stopErr
}

// Namespace creates a namespace with a generated name for t and returns its
// name. It is deleted when t ends (kube-apiserver alone runs no namespace
// controller, so it stays Terminating; nothing reads it again).
func (e *Env) Namespace(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "kubetest-"}}
	if err := e.Client.Create(ctx, ns); err != nil {
		t.Fatalf("kubetest: create namespace: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := e.Client.Delete(ctx, ns); client.IgnoreNotFound(err) != nil {
			t.Errorf("kubetest: delete namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}

// NewScheme returns a scheme with the client-go types, apiextensions/v1 and
// the Cluster API v1beta2 types (core, kubeadm bootstrap and control plane,
// addons, IPAM). CAPO has no Go types here: use unstructured objects.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		apiextensionsv1.AddToScheme,
		clusterv1.AddToScheme,
		bootstrapv1.AddToScheme,
		controlplanev1.AddToScheme,
		addonsv1.AddToScheme,
		ipamv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("kubetest: scheme: %w", err)
		}
	}
	return s, nil
}

// CRDDirs returns the CRD folders to install:
// ${OKM_CRDS_DIR:-<repository>/../shared/crds}/{ClusterAPICRDs,CAPOCRDs}.
// It fails when one is missing.
func CRDDirs() ([]string, error) {
	base := os.Getenv(EnvCRDsDir)
	if base == "" {
		root, err := RepoRoot()
		if err != nil {
			return nil, err
		}
		base = filepath.Join(root, "..", "shared", "crds")
	}
	var dirs []string
	for _, name := range []string{ClusterAPICRDs, CAPOCRDs} {
		d := filepath.Join(base, name)
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("kubetest: CRD folder %s not found (set %s)", d, EnvCRDsDir)
		}
		dirs = append(dirs, filepath.Clean(d))
	}
	return dirs, nil
}

// RepoRoot returns the repository root: the nearest directory at or above the
// working directory whose go.mod declares the main module.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("kubetest: %w", err)
	}
	for {
		if isMainModule(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("kubetest: no go.mod of %s above the working directory", modulePath)
		}
		dir = parent
	}
}

func isMainModule(gomod string) bool {
	f, err := os.Open(gomod)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`) == modulePath
		}
	}
	return false
}

var loggerOnce sync.Once

// quietLogger gives controller-runtime a logger, which it otherwise complains
// about after 30 seconds; a test that wants the logs sets its own first.
func quietLogger() {
	loggerOnce.Do(func() {
		ctrllog.SetLogger(logr.Discard())
	})
}
