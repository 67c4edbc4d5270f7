package openstack

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const v3Catalog = `[
 {"type":"identity","name":"keystone","endpoints":[{"interface":"public","region":"RegionOne","region_id":"RegionOne","url":"http://ks/v3"}]},
 {"type":"image","name":"glance","endpoints":[
   {"interface":"admin","region":"RegionOne","region_id":"RegionOne","url":"http://glance-admin:9292"},
   {"interface":"public","region":"RegionTwo","region_id":"RegionTwo","url":"http://glance-two:9292"},
   {"interface":"public","region":"RegionOne","region_id":"RegionOne","url":"http://glance-one:9292"},
   {"interface":"internal","region":"RegionOne","region_id":"RegionOne","url":"http://glance-int:9292"}]}
]`

const v2Catalog = `{"access":{"serviceCatalog":[
 {"type":"compute","name":"nova","endpoints":[
   {"region":"RegionOne","publicURL":"http://nova-pub:8774/v2.1","internalURL":"http://nova-int:8774/v2.1","adminURL":"http://nova-adm:8774/v2.1"}]}
]}}`

func TestEndpointURL(t *testing.T) {
	// One cache for every case, each resolved twice through it: the same
	// catalog asked for another service, interface or region must not get
	// a remembered answer.
	var cache endpointCache
	for _, tc := range []struct {
		name, raw, service, endpointType, region string
		want, wantErr                            string
	}{
		{name: "first public endpoint", raw: v3Catalog, service: "image", want: "http://glance-two:9292"},
		{name: "publicURL spelling", raw: v3Catalog, service: "image", endpointType: "publicURL", region: "RegionOne", want: "http://glance-one:9292"},
		{name: "internalURL", raw: v3Catalog, service: "image", endpointType: "internalURL", want: "http://glance-int:9292"},
		{name: "admin", raw: v3Catalog, service: "image", endpointType: "admin", want: "http://glance-admin:9292"},
		{name: "wrapped in catalog", raw: `{"catalog":` + v3Catalog + `}`, service: "image", region: "RegionTwo", want: "http://glance-two:9292"},
		{name: "whole token body", raw: `{"token":{"catalog":` + v3Catalog + `}}`, service: "identity", want: "http://ks/v3"},
		{name: "v2 catalog internal", raw: v2Catalog, service: "compute", endpointType: "internalURL", want: "http://nova-int:8774/v2.1"},
		{name: "v2 catalog default", raw: v2Catalog, service: "compute", want: "http://nova-pub:8774/v2.1"},
		{name: "missing service", raw: v3Catalog, service: "network", endpointType: "publicURL",
			wantErr: "publicURL endpoint for network service not found"},
		{name: "missing region", raw: v3Catalog, service: "image", endpointType: "internalURL", region: "RegionTwo",
			wantErr: "internalURL endpoint for image service in RegionTwo region not found"},
		{name: "empty", raw: ``, service: "image", wantErr: "The service catalog is empty."},
		{name: "empty list", raw: `[]`, service: "image", wantErr: "The service catalog is empty."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entries, err := parseCatalog([]byte(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			got, err := endpointURL(entries, tc.service, tc.endpointType, tc.region)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				if _, err := cache.resolve([]byte(tc.raw), tc.service, tc.endpointType, tc.region); err == nil || err.Error() != tc.wantErr {
					t.Errorf("cached resolve: error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("url = %q, want %q", got, tc.want)
			}
			for pass := 1; pass <= 2; pass++ {
				got, err := cache.resolve([]byte(tc.raw), tc.service, tc.endpointType, tc.region)
				if err != nil || got != tc.want {
					t.Errorf("cached resolve, pass %d: %q, %v; want %q", pass, got, err, tc.want)
				}
			}
		})
	}
}

func TestParseCatalogRejectsGarbage(t *testing.T) {
	if _, err := parseCatalog([]byte(`{"catalog": 3}`)); err == nil {
		t.Error("no error")
	}
}

func TestServiceRoots(t *testing.T) {
	for _, tc := range []struct {
		raw, version string
		root, base   string
	}{
		{"http://glance:9292", "v2", "http://glance:9292/", "http://glance:9292/v2/"},
		{"http://glance:9292/", "v2", "http://glance:9292/", "http://glance:9292/v2/"},
		{"https://cloud/image", "v2", "https://cloud/image/", "https://cloud/image/v2/"},
		{"https://cloud/image/v2", "v2", "https://cloud/image/", "https://cloud/image/v2/"},
		{"http://nova:8774/v2.1", "v2.1", "http://nova:8774/", "http://nova:8774/v2.1/"},
		{"http://nova:8774/v2.1/3f1c0e", "v2.1", "http://nova:8774/", "http://nova:8774/v2.1/3f1c0e/"},
		{"http://nova:8774", "v2.1", "http://nova:8774/", "http://nova:8774/v2.1/"},
		{"http://neutron:9696", "v2.0", "http://neutron:9696/", "http://neutron:9696/v2.0/"},
		{"http://cloud/network/v2.0/", "v2.0", "http://cloud/network/", "http://cloud/network/v2.0/"},
	} {
		root, base, err := serviceRoots(tc.raw, tc.version)
		if err != nil {
			t.Errorf("%s: %v", tc.raw, err)
			continue
		}
		if diff := cmp.Diff([2]string{tc.root, tc.base}, [2]string{root, base}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.raw, diff)
		}
	}
	for _, bad := range []string{"glance:9292", "ftp://x/", "http://", "://"} {
		if _, _, err := serviceRoots(bad, "v2"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
