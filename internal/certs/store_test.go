package certs

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// memRows is an in-memory x509keypair table.
type memRows map[string]KeyPairRow

func (m memRows) InsertKeyPair(_ context.Context, row KeyPairRow) error {
	m[row.UUID] = row
	return nil
}

func (m memRows) KeyPairByUUID(_ context.Context, uuid string) (*KeyPairRow, error) {
	r, ok := m[uuid]
	if !ok {
		return nil, ErrNotFound
	}
	return &r, nil
}

func (m memRows) DeleteKeyPair(_ context.Context, uuid string) error {
	if _, ok := m[uuid]; !ok {
		return ErrNotFound
	}
	delete(m, uuid)
	return nil
}

func TestX509KeyPairStore(t *testing.T) {
	rows := memRows{}
	n := 0
	s := NewX509KeyPairStore(rows, func() string {
		n++
		return []string{"", "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"}[n]
	})
	kp := KeyPair{CertPEM: []byte("-----BEGIN CERTIFICATE-----\nA\n-----END CERTIFICATE-----"),
		KeyPEM: []byte("-----BEGIN ENCRYPTED PRIVATE KEY-----\nB\n-----END ENCRYPTED PRIVATE KEY-----\n"), Passphrase: []byte("abcdefghijkl")}
	ctx := magnum.WithRequestContext(context.Background(), &magnum.RequestContext{ProjectID: "p1", UserID: "u1"})
	ref, err := s.Put(ctx, kp, "cluster-1")
	if err != nil {
		t.Fatal(err)
	}
	if ref != "11111111-1111-4111-8111-111111111111" {
		t.Errorf("ref = %q", ref)
	}
	want := KeyPairRow{UUID: ref, Certificate: string(kp.CertPEM), PrivateKey: string(kp.KeyPEM),
		PrivateKeyPassphrase: "abcdefghijkl", ProjectID: "p1", UserID: "u1"}
	if rows[ref] != want {
		t.Errorf("row = %+v, want %+v", rows[ref], want)
	}
	// Without a request context the owner is empty.
	ref2, err := s.Put(context.Background(), kp, ClientCertName)
	if err != nil {
		t.Fatal(err)
	}
	if r := rows[ref2]; r.ProjectID != "" || r.UserID != "" {
		t.Errorf("owner without context = %q/%q", r.ProjectID, r.UserID)
	}
	got, err := s.Get(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.CertPEM) != string(kp.CertPEM) || string(got.KeyPEM) != string(kp.KeyPEM) || string(got.Passphrase) != string(kp.Passphrase) {
		t.Errorf("Get = %+v", got)
	}
	if err := s.Delete(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, ref); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Delete = %v", err)
	}
	if err := s.Delete(ctx, ref); !errors.Is(err, ErrNotFound) {
		t.Errorf("Delete twice = %v", err)
	}
}

func TestResolveStoreType(t *testing.T) {
	for _, tc := range []struct {
		value   string
		set     bool
		want    string
		warn    bool
		errPart string
	}{
		{value: "barbican", set: false, want: StoreX509KeyPair, warn: true},
		{value: "x509keypair", set: true, want: StoreX509KeyPair},
		{value: "kubernetes", set: true, want: StoreKubernetes},
		{value: "barbican", set: true, errPart: "cert_manager_type = barbican is not supported"},
		{value: "local", set: true, errPart: "cert_manager_type = local is not supported"},
		{value: "vault", set: true, errPart: `"vault" is not a known certificate store`},
	} {
		got, warn, err := ResolveStoreType(tc.value, tc.set)
		if tc.errPart != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errPart) || !strings.Contains(err.Error(), "x509keypair") ||
				!strings.Contains(err.Error(), "kubernetes") {
				t.Errorf("%q set=%t: err = %v, want one containing %q and naming x509keypair and kubernetes", tc.value, tc.set, err, tc.errPart)
			}
			continue
		}
		if err != nil || got != tc.want || (warn != "") != tc.warn {
			t.Errorf("%q set=%t: %q, %q, %v", tc.value, tc.set, got, warn, err)
		}
	}
}
