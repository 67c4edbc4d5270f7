package api_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestQuotas(t *testing.T) {
	e := ngNewEnv(t)

	t.Run("admins create quotas; 201 with the row", func(t *testing.T) {
		r := e.do(ngAdmin, "", "POST", "/v1/quotas", map[string]any{"project_id": "p1", "resource": "Cluster", "hard_limit": 10})
		e.expect(r, 201, "")
		want := map[string]any{"id": 1.0, "project_id": "p1", "resource": "Cluster", "hard_limit": 10.0,
			"created_at": "2026-01-02T03:04:05+00:00", "updated_at": nil}
		if d := cmp.Diff(want, r.body); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
	})
	t.Run("a second quota for the same project and resource is a conflict", func(t *testing.T) {
		e.expect(e.do(ngAdmin, "", "POST", "/v1/quotas", map[string]any{"project_id": "p1", "hard_limit": 3}), 409,
			"Quota for project p1 already exists for resource Cluster.")
	})
	t.Run("create errors", func(t *testing.T) {
		e.expect(e.do(ngMember, "", "POST", "/v1/quotas", map[string]any{"project_id": "p1", "hard_limit": 3}), 403,
			"Policy doesn't allow quota:create to be performed.")
		e.expect(e.do(ngAdmin, "", "POST", "/v1/quotas", map[string]any{"hard_limit": 3}), 400, "Must provide a valid project ID.")
		e.expect(e.do(ngAdmin, "", "POST", "/v1/quotas", map[string]any{"project_id": "p3", "resource": "Pod"}), 400,
			"Invalid input for field/attribute resource. Value: 'Pod'. Value should be one of: Cluster")
		e.expect(e.do(ngAdmin, "", "POST", "/v1/quotas", map[string]any{"project_id": "p3", "hard_limit": -1}), 400,
			"Invalid input for field/attribute hard_limit. Value: '-1'. Value should be greater or equal to 0")
		e.expect(e.do(ngAdmin, "", "POST", "/v1/quotas", map[string]any{"project_id": "p3", "x": 1}), 400,
			"Unknown attribute for argument quota: x")
	})
	t.Run("get one: stored, default, or refused", func(t *testing.T) {
		r := e.do(ngReader, "", "GET", "/v1/quotas/p1/Cluster", nil)
		e.expect(r, 200, "")
		if r.body["hard_limit"] != 10.0 || r.body["id"] != 1.0 {
			t.Errorf("stored: %s", r.raw)
		}
		r = e.do(ngAdmin, "", "GET", "/v1/quotas/p7/Whatever", nil)
		e.expect(r, 200, "")
		if d := cmp.Diff(map[string]any{"hard_limit": 20.0, "project_id": "p7", "resource": "Cluster"}, r.body); d != "" {
			t.Errorf("default (-want +got):\n%s", d)
		}
		e.expect(e.do(ngReader, "", "GET", "/v1/quotas/p2/Cluster", nil), 403, "Not authorized.")
	})
	t.Run("patch writes hard_limit with its default", func(t *testing.T) {
		r := e.do(ngAdmin, "", "PATCH", "/v1/quotas/p1/Cluster", map[string]any{"hard_limit": 7})
		e.expect(r, 202, "")
		if r.body["hard_limit"] != 7.0 || r.body["updated_at"] == nil {
			t.Errorf("patched: %s", r.raw)
		}
		r = e.do(ngAdmin, "", "PATCH", "/v1/quotas/p1/Cluster", map[string]any{})
		e.expect(r, 202, "")
		if r.body["hard_limit"] != 1.0 {
			t.Errorf("empty body: %s", r.raw)
		}
		e.expect(e.do(ngAdmin, "", "PATCH", "/v1/quotas/p9/Cluster", map[string]any{"hard_limit": 2}), 404,
			"Quota could not be found: project_id p9 resource Cluster.")
	})
	t.Run("list: own project unless admin with all_tenants", func(t *testing.T) {
		e.expect(e.do(ngAdmin, "", "POST", "/v1/quotas", map[string]any{"project_id": "p2", "hard_limit": 5}), 201, "")
		r := e.do(ngAdmin, "", "GET", "/v1/quotas", nil)
		e.expect(r, 200, "")
		if items, _ := r.body["quotas"].([]any); len(items) != 0 {
			t.Errorf("admin own project: %s", r.raw)
		}
		r = e.do(ngAdmin, "", "GET", "/v1/quotas?all_tenants=True&limit=1", nil)
		e.expect(r, 200, "")
		if items, _ := r.body["quotas"].([]any); len(items) != 1 || r.body["next"] != "http://example.com/v1/quotas?sort_key=id&sort_dir=asc&limit=1&marker=1" {
			t.Errorf("all tenants: %s", r.raw)
		}
		r = e.do(ngAdmin, "", "GET", "/v1/quotas?all_tenants=1&marker=1", nil)
		if items, _ := r.body["quotas"].([]any); len(items) != 1 {
			t.Errorf("after marker: %s", r.raw)
		}
		e.expect(e.do(ngAdmin, "", "GET", "/v1/quotas?marker=42", nil), 404, "Quota could not be found: quota id 42 .")
		e.expect(e.do(ngMember, "", "GET", "/v1/quotas", nil), 403, "Policy doesn't allow quota:get_all to be performed.")
	})
	t.Run("routing quirks", func(t *testing.T) {
		e.expect(e.do(ngAdmin, "", "GET", "/v1/quotas/detail", nil), 400, `Missing argument: "resource"`)
		r := e.do(ngAdmin, "", "PATCH", "/v1/quotas", map[string]any{"project_id": "p1", "resource": "Cluster", "hard_limit": 4})
		e.expect(r, 202, "")
		if r.body["hard_limit"] != 4.0 {
			t.Errorf("path arguments from the body: %s", r.raw)
		}
	})
	t.Run("delete", func(t *testing.T) {
		e.expect(e.do(ngAdmin, "", "DELETE", "/v1/quotas/p2/Cluster", nil), 204, "")
		e.expect(e.do(ngAdmin, "", "DELETE", "/v1/quotas/p2/Cluster", nil), 404, "Quota could not be found: project_id p2 resource Cluster.")
		e.expect(e.do(ngMember, "", "DELETE", "/v1/quotas/p1/Cluster", nil), 403, "Policy doesn't allow quota:delete to be performed.")
	})
}
