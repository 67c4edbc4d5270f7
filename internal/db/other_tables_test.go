package db

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

func TestMagnumServices(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := t.Context()
		db := openMigrated(t, dialect)
		s := magnum.MagnumService{Host: "ctl-0", Binary: "magnum-conductor"}
		if err := db.CreateMagnumService(ctx, &s); err != nil {
			t.Fatal(err)
		}
		if *s.Disabled || *s.ForcedDown || s.ReportCount != 0 {
			t.Errorf("defaults: %+v", s)
		}
		dup := magnum.MagnumService{Host: "ctl-0", Binary: "magnum-conductor"}
		if err := db.CreateMagnumService(ctx, &dup); !errors.Is(err, ErrDuplicate) {
			t.Errorf("duplicate host/binary: %v", err)
		}
		seen := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
		s.ReportCount++
		s.LastSeenUp = &seen
		if err := db.UpdateMagnumService(ctx, &s, "report_count", "last_seen_up"); err != nil {
			t.Fatal(err)
		}
		got, err := db.GetMagnumService(ctx, "ctl-0", "magnum-conductor")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&s, got); diff != "" {
			t.Errorf("read back (-written +read):\n%s", diff)
		}
		other := magnum.MagnumService{Host: "ctl-1", Binary: "magnum-conductor"}
		if err := db.CreateMagnumService(ctx, &other); err != nil {
			t.Fatal(err)
		}
		list, _ := db.ListMagnumServices(ctx)
		if len(list) != 2 || list[0].Host != "ctl-0" {
			t.Errorf("list = %+v", list)
		}
		if err := db.DeleteMagnumService(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.GetMagnumService(ctx, "ctl-0", "magnum-conductor"); !errors.Is(err, ErrNotFound) {
			t.Errorf("after delete: %v", err)
		}
	})
}

func TestFederationsAndKeyPairs(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := t.Context()
		db := openMigrated(t, dialect)
		f := magnum.Federation{UUID: "f-1", Name: "fed-eu", ProjectID: "p1", HostClusterID: ptr("c-1"),
			Status: ptr(magnum.StatusCreateInProgress), Properties: map[string]string{"dns-zone": "example.com."}}
		if err := db.CreateFederation(ctx, &f); err != nil {
			t.Fatal(err)
		}
		var members, props string
		if err := db.SQL().QueryRowContext(ctx, "SELECT member_ids, properties FROM federation").Scan(&members, &props); err != nil {
			t.Fatal(err)
		}
		if members != "[]" || props != `{"dns-zone": "example.com."}` {
			t.Errorf("stored %s / %s", members, props)
		}
		f.MemberIDs = []string{"c-2", "c-3"}
		if err := db.UpdateFederation(ctx, &f, "member_ids"); err != nil {
			t.Fatal(err)
		}
		got, err := db.GetFederationByUUID(ctx, "f-1", ProjectScope("p1"))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&f, got); diff != "" {
			t.Errorf("federation (-written +read):\n%s", diff)
		}
		if _, err := db.GetFederationByUUID(ctx, "f-1", ProjectScope("p2")); !errors.Is(err, ErrNotFound) {
			t.Errorf("other project: %v", err)
		}
		if err := db.DeleteFederation(ctx, "f-1"); err != nil {
			t.Fatal(err)
		}

		kp := magnum.X509KeyPair{UUID: "kp-1", ProjectID: "p1", UserID: "u1", Certificate: ptr("-----BEGIN CERTIFICATE-----\nMII…\n-----END CERTIFICATE-----\n"),
			PrivateKey: ptr("-----BEGIN ENCRYPTED PRIVATE KEY-----\n…\n"), PrivateKeyPassphrase: ptr("pass")}
		if err := db.CreateX509KeyPair(ctx, &kp); err != nil {
			t.Fatal(err)
		}
		gotKP, err := db.GetX509KeyPairByUUID(ctx, "kp-1", AllProjects)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&kp, gotKP); diff != "" {
			t.Errorf("key pair (-written +read):\n%s", diff)
		}
		kp.Intermediates = ptr("chain")
		if err := db.UpdateX509KeyPair(ctx, &kp, "intermediates"); err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteX509KeyPair(ctx, "kp-1"); err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteX509KeyPair(ctx, "kp-1"); !errors.Is(err, ErrNotFound) {
			t.Errorf("second delete: %v", err)
		}
	})
}
