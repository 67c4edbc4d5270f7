package db

import (
	"errors"
	"testing"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

func sampleQuota() magnum.Quota {
	return magnum.Quota{ProjectID: "other-project", Resource: "Cluster", HardLimit: 5}
}

func TestQuotas(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := t.Context()
		db := openMigrated(t, dialect)
		for _, p := range []string{"p1", "p2", "p3"} {
			q := magnum.Quota{ProjectID: p, Resource: "Cluster", HardLimit: 10}
			if err := db.CreateQuota(ctx, &q); err != nil {
				t.Fatal(err)
			}
		}
		dup := magnum.Quota{ProjectID: "p1", Resource: "Cluster", HardLimit: 1}
		if err := db.CreateQuota(ctx, &dup); !errors.Is(err, ErrDuplicate) {
			t.Fatalf("duplicate quota: %v, want ErrDuplicate", err)
		}
		q, err := db.GetQuota(ctx, "p2", "Cluster")
		if err != nil || q.HardLimit != 10 || q.UpdatedAt != nil || q.CreatedAt.IsZero() {
			t.Fatalf("GetQuota = %+v, %v", q, err)
		}
		q.HardLimit = 3
		if err := db.UpdateQuota(ctx, q, "hard_limit"); err != nil {
			t.Fatal(err)
		}
		got, _ := db.GetQuotaByID(ctx, q.ID)
		if got.HardLimit != 3 || got.UpdatedAt == nil {
			t.Fatalf("after update: %+v", got)
		}
		all, err := db.ListQuotas(ctx, QuotaFilter{}, ListOptions{Marker: "1", Limit: 1})
		if err != nil || len(all) != 1 || all[0].ProjectID != "p2" {
			t.Fatalf("ListQuotas after marker 1 = %+v, %v", all, err)
		}
		if _, err := db.ListQuotas(ctx, QuotaFilter{}, ListOptions{Marker: "99"}); !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown marker: %v", err)
		}
		own, _ := db.ListQuotas(ctx, QuotaFilter{ProjectID: "p3"}, ListOptions{})
		if len(own) != 1 {
			t.Fatalf("ListQuotas(p3) = %+v", own)
		}
		if err := db.DeleteQuota(ctx, "p3", "Cluster"); err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteQuota(ctx, "p3", "Cluster"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("second delete: %v", err)
		}
	})
}

func TestCreateWithPresetID(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := t.Context()
		db := openMigrated(t, dialect)
		q := magnum.Quota{ID: 42, ProjectID: "p1", Resource: "Cluster", HardLimit: 10}
		if err := db.CreateQuota(ctx, &q); err != nil {
			t.Fatal(err)
		}
		got, err := db.GetQuotaByID(ctx, 42)
		if err != nil || got.ProjectID != "p1" {
			t.Fatalf("GetQuotaByID(42) = %+v, %v", got, err)
		}
		// The next generated id does not collide with the preset one.
		next := magnum.Quota{ProjectID: "p2", Resource: "Cluster", HardLimit: 1}
		if err := db.CreateQuota(ctx, &next); err != nil {
			t.Fatal(err)
		}
		if next.ID <= 42 {
			t.Errorf("generated id %d after a preset id of 42", next.ID)
		}
	})
}
