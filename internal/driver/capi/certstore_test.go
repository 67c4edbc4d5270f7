package capi

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/openkeel/openkeel-magnum/internal/certs"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/testutil/kubetest"
)

// testKeyPair is a stored certificate; the store copies the bytes as they
// are, so they need not parse.
func testKeyPair() certs.KeyPair {
	return certs.KeyPair{
		CertPEM:    []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"),
		KeyPEM:     []byte("-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIE\n-----END ENCRYPTED PRIVATE KEY-----\n"),
		Passphrase: []byte("secret-passphrase"),
	}
}

// seqNames returns UUID-like names 00000000-...-000000000001, ...2, ...
func seqNames() func() string {
	n := 0
	return func() string {
		n++
		return fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
	}
}

func newFakeCertClient(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	s, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
}

func callerCtx() context.Context {
	return magnum.WithRequestContext(context.Background(), &magnum.RequestContext{ProjectID: "p1", UserID: "u1"})
}

// checkCertStoreRoundTrip puts a key pair, checks the Secret written and
// reads the key pair back.
func checkCertStoreRoundTrip(t *testing.T, c client.Client, store certs.Store, namespace string) string {
	t.Helper()
	ctx := callerCtx()
	kp := testKeyPair()
	ref, err := store.Put(ctx, kp, "demo")
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	if ref != "okm-cert-00000000-0000-4000-8000-000000000001" {
		t.Errorf("ref = %q", ref)
	}
	var sec corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref}, &sec); err != nil {
		t.Fatalf("get secret: %v", err)
	}
	if sec.Type != corev1.SecretTypeOpaque {
		t.Errorf("type = %q", sec.Type)
	}
	if d := cmp.Diff(map[string]string{"app.kubernetes.io/managed-by": "openkeel-magnum"}, sec.Labels); d != "" {
		t.Errorf("labels (-want +got):\n%s", d)
	}
	wantAnn := map[string]string{
		"magnum.openstack.org/certificate-name": "demo",
		"magnum.openstack.org/project-id":       "p1",
		"magnum.openstack.org/user-id":          "u1",
	}
	if d := cmp.Diff(wantAnn, sec.Annotations); d != "" {
		t.Errorf("annotations (-want +got):\n%s", d)
	}
	wantData := map[string][]byte{"tls.crt": kp.CertPEM, "tls.key": kp.KeyPEM, "passphrase": kp.Passphrase}
	if d := cmp.Diff(wantData, sec.Data); d != "" {
		t.Errorf("data (-want +got):\n%s", d)
	}
	got, err := store.Get(ctx, ref)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if d := cmp.Diff(kp, *got); d != "" {
		t.Errorf("Get (-want +got):\n%s", d)
	}
	return ref
}

// checkCertStoreDelete deletes ref and checks that the Secret is gone and
// that deleting again is ErrNotFound.
func checkCertStoreDelete(t *testing.T, c client.Client, store certs.Store, namespace, ref string) {
	t.Helper()
	ctx := context.Background()
	if err := store.Delete(ctx, ref); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	var sec corev1.Secret
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref}, &sec)
	if !apierrors.IsNotFound(err) {
		t.Errorf("secret after Delete: %v, want NotFound (deletion timestamp %v)", err, sec.DeletionTimestamp)
	}
	if _, err := store.Get(ctx, ref); !errors.Is(err, certs.ErrNotFound) {
		t.Errorf("Get after Delete: %v, want ErrNotFound", err)
	}
	if err := store.Delete(ctx, ref); !errors.Is(err, certs.ErrNotFound) {
		t.Errorf("second Delete: %v, want ErrNotFound", err)
	}
}

func TestCertStoreFake(t *testing.T) {
	t.Run("round trip and delete", func(t *testing.T) {
		c := newFakeCertClient(t)
		store := NewCertStore(c, "", seqNames())
		ref := checkCertStoreRoundTrip(t, c, store, DefaultNamespace)
		checkCertStoreDelete(t, c, store, DefaultNamespace, ref)
	})
	t.Run("namespace", func(t *testing.T) {
		c := newFakeCertClient(t)
		store := NewCertStore(c, "mgmt", seqNames())
		ref := checkCertStoreRoundTrip(t, c, store, "mgmt")
		if _, err := NewCertStore(c, "", nil).Get(context.Background(), ref); !errors.Is(err, certs.ErrNotFound) {
			t.Errorf("Get in another namespace: %v, want ErrNotFound", err)
		}
	})
	t.Run("random names", func(t *testing.T) {
		store := NewCertStore(newFakeCertClient(t), "", nil)
		a, err := store.Put(context.Background(), testKeyPair(), certs.ClientCertName)
		if err != nil {
			t.Fatal(err)
		}
		b, err := store.Put(context.Background(), testKeyPair(), certs.ClientCertName)
		if err != nil {
			t.Fatal(err)
		}
		if a == b || !isCertSecretName(a) || len(a) != len("okm-cert-")+36 {
			t.Errorf("names %q %q", a, b)
		}
	})
	t.Run("not found", func(t *testing.T) {
		// Secrets the store does not own are unknown references, never
		// read or deleted.
		foreign := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "okm-cert-foreign", Namespace: DefaultNamespace},
			Data:       map[string][]byte{"tls.crt": []byte("x")},
		}
		other := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "kube-abcde-ca", Namespace: DefaultNamespace,
				Labels: map[string]string{LabelManagedBy: ManagedByValue}},
		}
		c := newFakeCertClient(t, foreign, other)
		store := NewCertStore(c, "", seqNames())
		ctx := context.Background()
		for _, ref := range []string{
			"okm-cert-00000000-0000-4000-8000-000000000009", "okm-cert-foreign", "kube-abcde-ca",
			"2c4a9b9e-5d5e-4a52-9e49-0c2f1ac1f0b1", "", "okm-cert-", "okm-cert-a/b", "okm-cert-ABC",
		} {
			if _, err := store.Get(ctx, ref); !errors.Is(err, certs.ErrNotFound) {
				t.Errorf("Get(%q) = %v, want ErrNotFound", ref, err)
			}
			if err := store.Delete(ctx, ref); !errors.Is(err, certs.ErrNotFound) {
				t.Errorf("Delete(%q) = %v, want ErrNotFound", ref, err)
			}
		}
		for _, s := range []*corev1.Secret{foreign, other} {
			if err := c.Get(ctx, client.ObjectKeyFromObject(s), &corev1.Secret{}); err != nil {
				t.Errorf("secret %s: %v", s.Name, err)
			}
		}
	})
	t.Run("without caller", func(t *testing.T) {
		c := newFakeCertClient(t)
		store := NewCertStore(c, "", seqNames())
		ref, err := store.Put(context.Background(), testKeyPair(), certs.ClientCertName)
		if err != nil {
			t.Fatal(err)
		}
		var sec corev1.Secret
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: DefaultNamespace, Name: ref}, &sec); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(map[string]string{annotationCertName: "Magnum-Conductor"}, sec.Annotations); d != "" {
			t.Errorf("annotations (-want +got):\n%s", d)
		}
	})
}

func TestCertStoreAPIServer(t *testing.T) {
	env := kubetest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: DefaultNamespace}}
	if err := env.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace: %v", err)
	}
	store := NewCertStore(env.Client, DefaultNamespace, seqNames())
	ref := checkCertStoreRoundTrip(t, env.Client, store, DefaultNamespace)
	checkCertStoreDelete(t, env.Client, store, DefaultNamespace, ref)
	if _, err := store.Get(ctx, "okm-cert-Not_A-Name"); !errors.Is(err, certs.ErrNotFound) {
		t.Errorf("Get of an invalid name: %v, want ErrNotFound", err)
	}
}
