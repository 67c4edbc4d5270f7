package kubetest

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestRepoRoot(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "testutil", "kubetest", "doc.go")); err != nil {
		t.Errorf("RepoRoot() = %s, which does not hold this package: %v", root, err)
	}
}

func TestCRDDirs(t *testing.T) {
	dirs, err := CRDDirs()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	if len(dirs) != 2 || filepath.Base(dirs[0]) != ClusterAPICRDs || filepath.Base(dirs[1]) != CAPOCRDs {
		t.Fatalf("CRDDirs() = %q", dirs)
	}
	for _, d := range dirs {
		m, err := filepath.Glob(filepath.Join(d, "*.yaml"))
		if err != nil || len(m) == 0 {
			t.Errorf("%s holds no manifest (%v)", d, err)
		}
	}
}

func TestCRDDirsOverride(t *testing.T) {
	base := t.TempDir()
	t.Setenv(EnvCRDsDir, base)
	if _, err := CRDDirs(); err == nil {
		t.Fatal("CRDDirs() with empty " + EnvCRDsDir + ": no error")
	}
	for _, name := range []string{ClusterAPICRDs, CAPOCRDs} {
		if err := os.Mkdir(filepath.Join(base, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dirs, err := CRDDirs()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(base, ClusterAPICRDs); dirs[0] != want {
		t.Errorf("CRDDirs()[0] = %s, want %s", dirs[0], want)
	}
}

func TestNewScheme(t *testing.T) {
	s, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	for _, gvk := range []schema.GroupVersionKind{
		{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Cluster"},
		{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachineDeployment"},
		{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta2", Kind: "KubeadmControlPlane"},
		{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta2", Kind: "KubeadmConfigTemplate"},
		{Group: "addons.cluster.x-k8s.io", Version: "v1beta2", Kind: "ClusterResourceSet"},
		{Group: "ipam.cluster.x-k8s.io", Version: "v1beta2", Kind: "IPAddressClaim"},
		{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"},
		{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"},
		{Version: "v1", Kind: "Secret"},
	} {
		if !s.Recognizes(gvk) {
			t.Errorf("scheme does not know %s", gvk)
		}
	}
}

func TestConfigured(t *testing.T) {
	t.Setenv(EnvAssets, "")
	t.Setenv(EnvKubeAPIServer, "")
	t.Setenv(EnvEtcd, "")
	if err := Configured(); err != ErrNotConfigured {
		t.Errorf("Configured() with nothing set = %v, want ErrNotConfigured", err)
	}
	missing := filepath.Join(t.TempDir(), "kube-apiserver")
	t.Setenv(EnvKubeAPIServer, missing)
	t.Setenv(EnvEtcd, missing)
	if err := Configured(); err == nil || err == ErrNotConfigured {
		t.Errorf("Configured() with a missing binary = %v, want a not-found error", err)
	}
}
