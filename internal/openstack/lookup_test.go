package openstack

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
	"github.com/openkeel/openkeel-magnum/internal/testutil/osfake"
)

// resolver is the method set the conductor relies on; Lookup and Static
// must both provide it.
type resolver interface {
	Image(ctx context.Context, ident string) (Image, error)
	ValidateImage(ctx context.Context, ident string) (Image, error)
	Flavor(ctx context.Context, ident string) (Flavor, error)
	Keypair(ctx context.Context, name string) (Keypair, error)
	ExternalNetwork(ctx context.Context, ident string) (Network, error)
	FixedNetwork(ctx context.Context, ident string) (Network, error)
	FixedSubnet(ctx context.Context, ident string) (Subnet, error)
}

var (
	_ resolver = (*Lookup)(nil)
	_ resolver = (*Static)(nil)
)

const (
	userToken = "gAAAAA-user-token"
	requestID = "req-0b8c4a9e-2f1d-4e3c-9a7b-6c5d4e3f2a10"

	imageUbuntu   = "11111111-1111-4111-8111-111111111111"
	imageNoDistro = "22222222-2222-4222-8222-222222222222"
	imageDupA     = "33333333-3333-4333-8333-333333333331"
	imageDupB     = "33333333-3333-4333-8333-333333333332"
	imageHidden   = "44444444-4444-4444-8444-444444444444"
	imageNamedID  = "55555555-5555-4555-8555-555555555555"

	netPublic   = "aaaaaaaa-0000-4000-8000-000000000001"
	netPrivate  = "aaaaaaaa-0000-4000-8000-000000000002"
	netExtDupA  = "aaaaaaaa-0000-4000-8000-000000000003"
	netExtDupB  = "aaaaaaaa-0000-4000-8000-000000000004"
	netDupA     = "aaaaaaaa-0000-4000-8000-000000000005"
	netDupB     = "aaaaaaaa-0000-4000-8000-000000000006"
	subPrivate  = "bbbbbbbb-0000-4000-8000-000000000001"
	subDupA     = "bbbbbbbb-0000-4000-8000-000000000002"
	subDupB     = "bbbbbbbb-0000-4000-8000-000000000003"
	netUUIDName = "aaaaaaaa-0000-4000-8000-000000000007"
)

func testSeed() osfake.Seed {
	return osfake.Seed{
		Images: []osfake.Image{
			{ID: imageUbuntu, Name: "ubuntu-jammy", OSDistro: "ubuntu", MagnumDriver: "k8s_capi_helm_v1",
				Properties: map[string]string{"kube_version": "v1.30.2"}},
			{ID: imageNoDistro, Name: "plain"},
			{ID: imageDupA, Name: "dup"},
			{ID: imageDupB, Name: "dup"},
			{ID: imageHidden, Name: "hidden", OSDistro: "flatcar", Hidden: true},
			// An image whose name is another image's ID.
			{ID: imageNamedID, Name: imageUbuntu, OSDistro: "debian"},
		},
		Flavors: []osfake.Flavor{
			{ID: "1", Name: "m1.small", VCPUs: 1, RAM: 2048, Disk: 20},
			{ID: "2", Name: "m1.medium", VCPUs: 2, RAM: 4096, Disk: 40},
			{ID: "3", Name: "m1.large", VCPUs: 4, RAM: 8192, Disk: 80},
			{ID: "bfv", Name: "boot.from.volume", VCPUs: 2, RAM: 4096, Disk: 0},
			{ID: "c0ffee", Name: "odd name/with slash", VCPUs: 1, RAM: 512, Disk: 1},
		},
		Keypairs: []osfake.Keypair{{Name: "mykey", PublicKey: "ssh-ed25519 AAAA test", Fingerprint: "aa:bb"}},
		Networks: []osfake.Network{
			{ID: netPublic, Name: "public", External: true},
			{ID: netPrivate, Name: "private"},
			{ID: netExtDupA, Name: "ext-dup", External: true},
			{ID: netExtDupB, Name: "ext-dup", External: true},
			{ID: netDupA, Name: "dup"},
			{ID: netDupB, Name: "dup", External: true},
			// A network named like another network's ID.
			{ID: netUUIDName, Name: netPrivate},
		},
		Subnets: []osfake.Subnet{
			{ID: subPrivate, Name: "private-subnet", NetworkID: netPrivate, CIDR: "10.0.0.0/24"},
			{ID: subDupA, Name: "dup", NetworkID: netPrivate, CIDR: "10.0.1.0/24"},
			{ID: subDupB, Name: "dup", NetworkID: netPrivate, CIDR: "10.0.2.0/24"},
		},
	}
}

// harness is a Lookup wired to a fresh double through the token's catalog.
type harness struct {
	fake   *osfake.Server
	lookup *Lookup
	ctx    context.Context
}

func newHarness(t *testing.T, mutate func(*Options)) *harness {
	t.Helper()
	fake := osfake.New(t, testSeed())
	fake.RequireToken(userToken)
	opts := Options{Timeout: 5 * time.Second}
	if mutate != nil {
		mutate(&opts)
	}
	clients, err := NewClients(opts)
	if err != nil {
		t.Fatalf("NewClients: %v", err)
	}
	rc := &magnum.RequestContext{RequestID: requestID, AuthToken: userToken, ServiceCatalog: fake.Catalog()}
	return &harness{fake: fake, lookup: NewLookup(clients), ctx: magnum.WithRequestContext(t.Context(), rc)}
}

// paths returns the recorded calls as "GET image /v2/images?name=x".
func (h *harness) paths() []string {
	var out []string
	for _, c := range h.fake.Calls() {
		out = append(out, c.String())
	}
	return out
}

// checkCalls compares the requests made with want and checks that every
// request carried the caller's token and that no list went unfiltered
// (except the flavor listing, which Nova cannot filter by name).
func (h *harness) checkCalls(t *testing.T, want []string) {
	t.Helper()
	if diff := cmp.Diff(want, h.paths()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	for _, c := range h.fake.Calls() {
		if c.Token != userToken {
			t.Errorf("%s: token %q, want the caller's", c, c.Token)
		}
		if c.IsList() && !c.Filtered() && c.Path != "/v2.1/flavors/detail" {
			t.Errorf("unfiltered list: %s", c)
		}
	}
}

// wantError checks that err is a *magnum.Error with exactly this status,
// kind and message.
func wantError(t *testing.T, err error, status int, kind, message string) {
	t.Helper()
	var me *magnum.Error
	if !errors.As(err, &me) {
		t.Fatalf("error = %v (%T), want *magnum.Error %d %q", err, err, status, message)
	}
	got := magnum.Error{Status: me.Status, Kind: me.Kind, Message: me.Message}
	want := magnum.Error{Status: status, Kind: kind, Message: message}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

// wantPlainError checks that err is an error the API renders as 500 (not a
// *magnum.Error).
func wantPlainError(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("no error, want a failure")
	}
	var me *magnum.Error
	if errors.As(err, &me) {
		t.Fatalf("error = %d %q, want an unexpected (500) error", me.Status, me.Message)
	}
}
