package openstack

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestVolumeTypesList(t *testing.T) {
	var tokens []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tokens = append(tokens, r.Header.Get("X-Auth-Token"))
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v3/p1/types":
			_, _ = w.Write([]byte(`{"volume_types":[{"id":"1","name":"__DEFAULT__"},{"id":"2","name":"ssd"},{"id":"3","name":"hdd"}]}`))
		case "/v3/p1/types/default":
			_, _ = w.Write([]byte(`{"volume_type":{"id":"2","name":"ssd"}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	v, err := NewVolumeTypes(VolumeTypeOptions{SessionOptions: SessionOptions{Timeout: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	catalog := func(typ string) []byte {
		return []byte(`[{"type":"` + typ + `","endpoints":[{"interface":"public","region":"RegionOne","url":"` + srv.URL + `/v3/p1"}]}]`)
	}

	for _, typ := range []string{"volumev3", "block-storage"} {
		t.Run("catalog type "+typ, func(t *testing.T) {
			tokens = nil
			got, ok, err := v.List(t.Context(), Caller{Token: "user-token", ProjectID: "p1", ServiceCatalog: catalog(typ)})
			if err != nil || !ok {
				t.Fatalf("List = %v, %v", ok, err)
			}
			want := []VolumeType{{Name: "__DEFAULT__"}, {Name: "ssd", Default: true}, {Name: "hdd"}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("types (-want +got):\n%s", diff)
			}
			for _, tok := range tokens {
				if tok != "user-token" {
					t.Errorf("call with token %q, want the user's", tok)
				}
			}
		})
	}
	t.Run("no Cinder in the catalog", func(t *testing.T) {
		got, ok, err := v.List(t.Context(), Caller{Token: "user-token", ServiceCatalog: catalog("compute")})
		if err != nil || ok || got != nil {
			t.Errorf("List = %v, %v, %v; want not available", got, ok, err)
		}
	})
}
