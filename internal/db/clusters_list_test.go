package db

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// jsonColumnInputs are JSON column texts in the spellings writers produce,
// plus broken ones.
var jsonColumnInputs = []string{
	`{}`, ` { } `, `{"a": "b"}`, `{"a":"b","c":"d"}`, `{"kube_tag": "v1.30.4", "boot_volume_size": "40"}`,
	`{"k": "1", "k": "2"}`, `{"a": 1}`, `{"a": true, "b": null}`, `{"a": "\u00e9"}`, `{"a": "x\"y"}`,
	`{"a": "é"}`, `{"a": ["x"]}`, `{"a": {"b": "c"}}`, `null`, `[]`, `["a", "b"]`, `[ "a" , "b" ]`,
	`["a", 1, null, true]`, `["\ud83d\ude80"]`, `[1.5e3]`, `{"a": "b"} trailing`, `{"a": "b",}`, `{"a" "b"}`,
	`{"a": "b"`, `{`, `[`, `["a",]`, `["a"`, `"str"`, `12`, ``, ` `, `{"a":"b"}` + "\n", "\t[\"a\"]\r\n",
	`{"a": "tab	inside"}`, `{"": ""}`, `{"a": "", "": "b"}`, `[""]`, `{"a": "b", "c": "d", "e": "f"}  `,
}

// TestFastJSONColumnsMatchEncodingJSON checks that decodeStringMap and
// decodeStringList, with their flat-string fast paths, decode exactly as
// encoding/json alone does (value, nil-ness and error), on fixed and
// pseudo-random column texts.
func TestFastJSONColumnsMatchEncodingJSON(t *testing.T) {
	inputs := append([]string{}, jsonColumnInputs...)
	rng := rand.New(rand.NewPCG(7, 11))
	tokens := []string{`{`, `}`, `[`, `]`, `"a"`, `"b"`, `"é"`, `"\n"`, `:`, `,`, ` `, `1`, `null`, `"k"`, `""`}
	for range 3000 {
		var sb strings.Builder
		for range rng.IntN(10) {
			sb.WriteString(tokens[rng.IntN(len(tokens))])
		}
		inputs = append(inputs, sb.String())
	}
	fastOK := 0
	for _, s := range inputs {
		want, werr := decodeStringMapJSON(s)
		got, gerr := decodeStringMap(s)
		if diff := cmp.Diff(want, got); diff != "" || (werr == nil) != (gerr == nil) {
			t.Errorf("map %q: (-encoding/json +decodeStringMap) %s errors %v / %v", s, diff, werr, gerr)
		}
		if werr != nil && gerr != nil && werr.Error() != gerr.Error() {
			t.Errorf("map %q: error %q, want %q", s, gerr, werr)
		}
		if (want == nil) != (got == nil) {
			t.Errorf("map %q: nil %v, want %v", s, got == nil, want == nil)
		}
		wl, werr := decodeStringListJSON(s)
		gl, gerr := decodeStringList(s)
		if diff := cmp.Diff(wl, gl); diff != "" || (werr == nil) != (gerr == nil) {
			t.Errorf("list %q: (-encoding/json +decodeStringList) %s errors %v / %v", s, diff, werr, gerr)
		}
		if werr != nil && gerr != nil && werr.Error() != gerr.Error() {
			t.Errorf("list %q: error %q, want %q", s, gerr, werr)
		}
		if (wl == nil) != (gl == nil) {
			t.Errorf("list %q: nil %v, want %v", s, gl == nil, wl == nil)
		}
		if _, ok := parseFlatObject(s); ok {
			fastOK++
		}
	}
	if fastOK < 10 {
		t.Errorf("the fast path took only %d inputs", fastOK)
	}
}

// TestListClustersView checks that the view reads return the full reads'
// rows, order, pagination and errors, with exactly the view's fields set.
func TestListClustersView(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := t.Context()
		db := openFresh(t, dialect, Options{Now: fixedClock()})
		if err := db.Upgrade(ctx); err != nil {
			t.Fatal(err)
		}
		var uuids []string
		for i := range 7 {
			c := newCluster(i, []string{"p1", "p2"}[i%2])
			c.Name = fmt.Sprintf("c-%d", 7-i)
			c.Keypair = ptr("kp")
			c.APIAddress = ptr("https://10.0.0.1:6443")
			c.HealthStatusReason = map[string]string{"api": "ok", "i": fmt.Sprint(i)}
			c.CACertRef = ptr("ca-ref")
			c.DockerVolumeSize = ptr(i)
			if i == 3 {
				c.Labels = map[string]string{"é": "\u2028", "q": `"`}
				c.Keypair = nil
			}
			if err := db.CreateCluster(ctx, &c); err != nil {
				t.Fatal(err)
			}
			if i == 5 {
				if err := db.UpdateCluster(ctx, &c, "status"); err != nil {
					t.Fatal(err)
				}
			}
			uuids = append(uuids, c.UUID)
		}
		if _, err := db.SQL().ExecContext(ctx, db.d.rebind(`UPDATE cluster SET labels = ? WHERE uuid = ?`), `{"n": 1, "b": false}`, uuids[4]); err != nil {
			t.Fatal(err)
		}
		summary := func(c magnum.Cluster) magnum.Cluster {
			return magnum.Cluster{ID: c.ID, UUID: c.UUID, Name: c.Name, ClusterTemplateID: c.ClusterTemplateID,
				Keypair: c.Keypair, DockerVolumeSize: c.DockerVolumeSize, Labels: c.Labels,
				MasterFlavorID: c.MasterFlavorID, FlavorID: c.FlavorID, CreateTimeout: c.CreateTimeout,
				StackID: c.StackID, Status: c.Status, HealthStatus: c.HealthStatus}
		}
		detail := func(c magnum.Cluster) magnum.Cluster {
			c.CACertRef, c.MagnumCertRef, c.EtcdCACertRef, c.FrontProxyCACertRef = nil, nil, nil, nil
			return c
		}
		cases := []struct {
			f ClusterFilter
			o ListOptions
		}{
			{ClusterFilter{Scope: AllProjects}, ListOptions{}},
			{ClusterFilter{Scope: ProjectScope("p1")}, ListOptions{Limit: 2}},
			{ClusterFilter{Scope: AllProjects}, ListOptions{Limit: 3, Marker: uuids[2]}},
			{ClusterFilter{Scope: AllProjects}, ListOptions{SortKey: "name", SortDir: "desc", Marker: uuids[5]}},
			{ClusterFilter{Scope: AllProjects}, ListOptions{SortKey: "labels"}},
			{ClusterFilter{Scope: AllProjects}, ListOptions{SortKey: "keypair", SortDir: "asc", Marker: uuids[3]}},
			{ClusterFilter{Scope: AllProjects}, ListOptions{SortKey: "node_count"}},
			{ClusterFilter{Scope: AllProjects}, ListOptions{SortDir: "up"}},
			{ClusterFilter{Scope: AllProjects}, ListOptions{Marker: "no-such-uuid"}},
			{ClusterFilter{}, ListOptions{}},
		}
		for _, tc := range cases {
			full, ferr := db.ListClusters(ctx, tc.f, tc.o)
			for view, project := range map[ClusterView]func(magnum.Cluster) magnum.Cluster{
				ClusterViewSummary: summary, ClusterViewDetail: detail,
			} {
				got, err := db.ListClustersView(ctx, tc.f, tc.o, view)
				if (ferr == nil) != (err == nil) || ferr != nil && (errors.Is(err, ErrNotFound) != errors.Is(ferr, ErrNotFound) ||
					errors.Is(err, ErrInvalidSortKey) != errors.Is(ferr, ErrInvalidSortKey) ||
					errors.Is(err, ErrInvalidSortDir) != errors.Is(ferr, ErrInvalidSortDir)) {
					t.Errorf("%+v %+v view %d: error %v, want %v", tc.f, tc.o, view, err, ferr)
					continue
				}
				var want []magnum.Cluster
				for _, c := range full {
					want = append(want, project(c))
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%+v %+v view %d: (-want +got)\n%s", tc.f, tc.o, view, diff)
				}
			}
		}
		if _, err := db.ListClustersView(ctx, ClusterFilter{Scope: AllProjects}, ListOptions{}, 0); err == nil {
			t.Errorf("view 0 accepted")
		}
	})
}

// TestListNodeGroupSizesOfClusters checks the view read of nodegroups
// against ListNodeGroupsOfClusters, with nodegroups of several clusters
// interleaved in id order.
func TestListNodeGroupSizesOfClusters(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := t.Context()
		db := openMigrated(t, dialect)
		add := func(cluster, name string, role *string, count *int, addrs []string) {
			t.Helper()
			ng := magnum.NodeGroup{UUID: fmt.Sprintf("%s-%s", cluster, name), Name: name, ClusterID: cluster,
				ProjectID: "p1", Role: role, NodeCount: count, NodeAddresses: addrs,
				Labels: map[string]string{"a": "b"}, NodeLabels: map[string]string{"x": "y"}}
			if err := db.CreateNodeGroup(ctx, &ng); err != nil {
				t.Fatal(err)
			}
		}
		add("c1", "master", ptr("master"), ptr(1), []string{"10.0.0.1"})
		add("c2", "master", ptr("master"), ptr(3), []string{"10.1.0.1", "10.1.0.2", "10.1.0.3"})
		add("c1", "worker", ptr("worker"), ptr(2), []string{"10.0.1.1", "é\u2028"})
		add("c3", "odd", nil, nil, nil)
		add("c2", "worker", ptr("worker"), ptr(0), []string{})
		add("c1", "extra", ptr("gpu"), ptr(4), nil)
		if _, err := db.SQL().ExecContext(ctx, db.d.rebind(`UPDATE nodegroup SET node_addresses = ? WHERE uuid = ?`), `["x", 1]`, "c1-extra"); err != nil {
			t.Fatal(err)
		}
		for _, ids := range [][]string{{"c1", "c2", "c3", "c4"}, {"c2"}, {}, {"none"}} {
			full, err := db.ListNodeGroupsOfClusters(ctx, ids)
			if err != nil {
				t.Fatal(err)
			}
			for _, withAddr := range []bool{false, true} {
				got, err := db.ListNodeGroupSizesOfClusters(ctx, ids, withAddr)
				if err != nil {
					t.Fatal(err)
				}
				want := map[string][]magnum.NodeGroup{}
				for id, ngs := range full {
					for _, ng := range ngs {
						v := magnum.NodeGroup{ClusterID: ng.ClusterID, Role: ng.Role, NodeCount: ng.NodeCount}
						if withAddr {
							v.NodeAddresses = ng.NodeAddresses
						}
						want[id] = append(want[id], v)
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%v addresses %v: (-want +got)\n%s", ids, withAddr, diff)
				}
			}
		}
	})
}
