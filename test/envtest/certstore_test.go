package envtest

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openkeel/openkeel-magnum/internal/app"
	"github.com/openkeel/openkeel-magnum/internal/config"
	"github.com/openkeel/openkeel-magnum/internal/db"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/testutil/kubetest"
)

// TestKubernetesCertificateStore wires the service the way
// `[certificates]/cert_manager_type = kubernetes` does and checks that a
// cluster's certificates are Secrets of the management namespace, served
// back byte for byte, and removed when the cluster's certificates are
// deleted.
func TestKubernetesCertificateStore(t *testing.T) {
	env := kubetest.Start(t)
	ns := env.Namespace(t)
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "magnum.conf")
	text := "[certificates]\ncert_manager_type = kubernetes\n[capi]\nkubeconfig = " + kubeconfig + "\nnamespace = " + ns + "\n"
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, _, err := config.Load([]string{conf}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	d, err := db.Open(ctx, "sqlite", "file:"+filepath.Join(dir, "m.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Upgrade(ctx); err != nil {
		t.Fatal(err)
	}
	cond, err := app.NewConductor(opts, app.ModeAllInOne, d, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	rc := &magnum.RequestContext{ProjectID: "p1", UserID: "u1"}
	ctx = magnum.WithRequestContext(ctx, rc)
	cl := &magnum.Cluster{UUID: "3f0c2b7e-8d5a-4c1e-9b6f-2a7d4e8c1b90", Name: "k8s-one", ProjectID: "p1", UserID: "u1"}
	if err := cond.GenerateClusterCertificates(ctx, cl); err != nil {
		t.Fatal(err)
	}
	refs := []*string{cl.CACertRef, cl.EtcdCACertRef, cl.FrontProxyCACertRef, cl.MagnumCertRef}
	for _, ref := range refs {
		if ref == nil || !strings.HasPrefix(*ref, "okm-cert-") {
			t.Fatalf("certificate reference %v is not a Secret name", ref)
		}
	}
	var secrets corev1.SecretList
	if err := env.Client.List(ctx, &secrets, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if got := countCertSecrets(secrets); got != 4 {
		t.Fatalf("%d certificate Secrets in %s, want 4", got, ns)
	}
	// The CA served is the one stored in the Secret.
	pem, err := cond.GetCACertificate(ctx, cl, "kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	var sec corev1.Secret
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: *cl.CACertRef}, &sec); err != nil {
		t.Fatal(err)
	}
	if string(sec.Data["tls.crt"]) != pem {
		t.Error("the CA served differs from the Secret's tls.crt")
	}

	if err := cond.DeleteClusterCertificates(ctx, cl); err != nil {
		t.Fatal(err)
	}
	secrets = corev1.SecretList{}
	if err := env.Client.List(ctx, &secrets, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if got := countCertSecrets(secrets); got != 0 {
		t.Errorf("%d certificate Secrets left after deleting the cluster's certificates", got)
	}
}

func countCertSecrets(l corev1.SecretList) int {
	n := 0
	for _, s := range l.Items {
		if strings.HasPrefix(s.Name, "okm-cert-") && s.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}
