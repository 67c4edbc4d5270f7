package osfake

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func seed() Seed {
	return Seed{
		Images: []Image{
			{ID: "i1", Name: "ubuntu", OSDistro: "ubuntu", Properties: map[string]string{"kube_version": "v1.30.2"}},
			{ID: "i2", Name: "ubuntu"},
			{ID: "i3", Name: "hidden", Hidden: true},
		},
		Flavors:  []Flavor{{ID: "1", Name: "m1.small", VCPUs: 1, RAM: 2048, Disk: 20}, {ID: "2", Name: "m1.medium", VCPUs: 2, RAM: 4096, Disk: 40}},
		Keypairs: []Keypair{{Name: "k", PublicKey: "ssh-ed25519 AAAA", Fingerprint: "f"}},
		Networks: []Network{{ID: "n1", Name: "public", External: true}, {ID: "n2", Name: "private"}},
		Subnets:  []Subnet{{ID: "s1", Name: "private-subnet", NetworkID: "n2", CIDR: "10.0.0.0/24"}},
	}
}

func get(t *testing.T, u string, out any) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", "tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil && resp.Header.Get("Content-Type") == "application/json" {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode
}

func TestGlance(t *testing.T) {
	s := New(t, seed())
	var img map[string]any
	if st := get(t, s.Endpoint(ServiceImage, "public")+"/v2/images/i1", &img); st != 200 {
		t.Fatalf("show: %d", st)
	}
	if img["os_distro"] != "ubuntu" || img["kube_version"] != "v1.30.2" || img["id"] != "i1" {
		t.Errorf("properties are not top-level: %v", img)
	}
	if st := get(t, s.Endpoint(ServiceImage, "public")+"/v2/images/nope", nil); st != 404 {
		t.Errorf("missing image: %d", st)
	}
	s.SetPageSize(1)
	var list struct {
		Images []map[string]any `json:"images"`
		Next   string           `json:"next"`
	}
	get(t, s.Endpoint(ServiceImage, "public")+"/v2/images?name=ubuntu", &list)
	if len(list.Images) != 1 || list.Next != "/v2/images?marker=i1&name=ubuntu" {
		t.Errorf("first page: %d images, next %q", len(list.Images), list.Next)
	}
	list.Next = ""
	get(t, s.Endpoint(ServiceImage, "public")+"/v2/images?marker=i1&name=ubuntu", &list)
	if len(list.Images) != 1 || list.Images[0]["id"] != "i2" {
		t.Errorf("second page: %v", list.Images)
	}
	s.SetPageSize(0)
	get(t, s.Endpoint(ServiceImage, "public")+"/v2/images?name=hidden", &list)
	if len(list.Images) != 0 {
		t.Errorf("hidden image listed: %v", list.Images)
	}
}

func TestNova(t *testing.T) {
	s := New(t, seed())
	base := s.Endpoint(ServiceCompute, "internal")
	var show struct {
		Flavor map[string]any `json:"flavor"`
	}
	if st := get(t, base+"/flavors/2", &show); st != 200 || show.Flavor["name"] != "m1.medium" || show.Flavor["disk"] != 40.0 {
		t.Errorf("show: %d %v", st, show.Flavor)
	}
	var nf map[string]map[string]any
	if st := get(t, base+"/flavors/m1.medium", &nf); st != 404 || nf["itemNotFound"]["message"] != "Flavor m1.medium could not be found." {
		t.Errorf("show by name: %d %v", st, nf)
	}
	s.SetPageSize(1)
	var list struct {
		Flavors []map[string]any    `json:"flavors"`
		Links   []map[string]string `json:"flavors_links"`
	}
	get(t, base+"/flavors/detail", &list)
	if len(list.Flavors) != 1 || len(list.Links) != 1 || list.Links[0]["href"] != base+"/flavors/detail?marker=1" {
		t.Errorf("detail page: %v %v", list.Flavors, list.Links)
	}
	var kp struct {
		Keypair map[string]any `json:"keypair"`
	}
	if st := get(t, base+"/os-keypairs/k", &kp); st != 200 || kp.Keypair["public_key"] != "ssh-ed25519 AAAA" {
		t.Errorf("keypair: %d %v", st, kp)
	}
	if st := get(t, base+"/os-keypairs/other", nil); st != 404 {
		t.Errorf("missing keypair: %d", st)
	}
	if c := s.Calls()[0]; c.Interface != "internal" || c.Service != ServiceCompute || c.Path != "/v2.1/flavors/2" || c.Token != "tok" {
		t.Errorf("recorded call: %+v", c)
	}
}

func TestNeutron(t *testing.T) {
	s := New(t, seed())
	base := s.Endpoint(ServiceNetwork, "public") + "/v2.0"
	names := func(q string) []string {
		var body struct {
			Networks []map[string]any `json:"networks"`
		}
		get(t, base+"/networks"+q, &body)
		var out []string
		for _, n := range body.Networks {
			out = append(out, n["name"].(string))
		}
		return out
	}
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"", []string{"public", "private"}},
		{"?router:external=True", []string{"public"}},
		{"?router%3Aexternal=false", []string{"private"}},
		{"?name=private", []string{"private"}},
		{"?name=public&router:external=false", nil},
		{"?id=n1&id=n2", []string{"public", "private"}},
	} {
		if diff := cmp.Diff(tc.want, names(tc.q)); diff != "" {
			t.Errorf("networks%s (-want +got):\n%s", tc.q, diff)
		}
	}
	var e map[string]map[string]any
	if st := get(t, base+"/networks/nope", &e); st != 404 || e["NeutronError"]["type"] != "NetworkNotFound" {
		t.Errorf("missing network: %d %v", st, e)
	}
	var sub struct {
		Subnets []map[string]any `json:"subnets"`
	}
	get(t, base+"/subnets?network_id=n2", &sub)
	if len(sub.Subnets) != 1 || sub.Subnets[0]["cidr"] != "10.0.0.0/24" {
		t.Errorf("subnets: %v", sub.Subnets)
	}
	calls := s.Calls()
	if !calls[0].IsList() || calls[0].Filtered() || !calls[3].Filtered() {
		t.Errorf("list classification: %v", calls[:4])
	}
	// The first three network lists and the subnet list by network.
	if got := len(s.UnfilteredLists()); got != 4 {
		t.Errorf("unfiltered lists = %d, want 4", got)
	}
}

func TestFaults(t *testing.T) {
	s := New(t, seed())
	s.Inject(Fault{Service: ServiceNetwork, Path: "/v2.0/subnets", Status: 503, Times: 1})
	u := s.Endpoint(ServiceNetwork, "public") + "/v2.0/subnets"
	if st := get(t, u, nil); st != 503 {
		t.Errorf("first call: %d", st)
	}
	if st := get(t, u, nil); st != 200 {
		t.Errorf("after the fault: %d", st)
	}

	s.RequireToken("other")
	if st := get(t, u, nil); st != 401 {
		t.Errorf("wrong token: %d", st)
	}
	s.RequireToken("")

	s.Inject(Fault{Service: ServiceImage, Hang: true})
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.Endpoint(ServiceImage, "public")+"/v2/images", nil)
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("hung request answered")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error = %v", err)
	}
	s.Reset()
	if st := get(t, s.Endpoint(ServiceImage, "public")+"/v2/images/i1", nil); st != 200 {
		t.Errorf("after reset: %d", st)
	}
	if n := len(s.Calls()); n != 1 {
		t.Errorf("calls after reset = %d", n)
	}
}

func TestCatalog(t *testing.T) {
	s := New(t, Seed{})
	var cat []struct {
		Type      string `json:"type"`
		Endpoints []struct {
			Interface, Region, URL string
		} `json:"endpoints"`
	}
	if err := json.Unmarshal(s.CatalogForRegions("RegionOne", "RegionTwo"), &cat); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range cat {
		for _, ep := range e.Endpoints {
			got[e.Type+" "+ep.Interface+" "+ep.Region] = ep.URL
		}
	}
	for k, want := range map[string]string{
		"image public RegionOne":     s.URL + "/image",
		"compute internal RegionOne": s.URL + "/internal/compute/v2.1",
		"network admin RegionOne":    s.URL + "/admin/network",
		"network public RegionTwo":   s.URL + "/RegionTwo/network",
	} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	if len(got) != 18 {
		t.Errorf("%d endpoints, want 18", len(got))
	}
}
