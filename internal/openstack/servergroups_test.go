package openstack

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/testutil/osfake"
)

func newServerGroupsHarness(t *testing.T) (*ServerGroups, *osfake.ServerGroupsServer, Caller) {
	t.Helper()
	fake := osfake.NewServerGroups(t)
	fake.AddToken("user-token", "p1")
	catalog := `[{"type":"compute","name":"nova","endpoints":[{"interface":"public","region":"RegionOne","url":"` +
		fake.ComputeEndpoint() + `"}]}]`
	g, err := NewServerGroups(ServerGroupOptions{
		Service: &ServiceAuth{AuthURL: fake.IdentityEndpoint(), Username: "magnum", Password: "pw",
			UserDomainName: "Default", ProjectName: "service", ProjectDomainName: "Default"},
		SessionOptions: SessionOptions{Timeout: 2 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	return g, fake, Caller{Token: "user-token", UserID: "u1", ProjectID: "p1", ServiceCatalog: []byte(catalog)}
}

func TestServerGroupsEnsureIsIdempotent(t *testing.T) {
	g, fake, caller := newServerGroupsHarness(t)
	fake.Seed(osfake.ServerGroup{ID: "other", Name: "kube-abcde", Policy: "affinity", ProjectID: "p2"})

	id, err := g.Ensure(t.Context(), caller, "kube-abcde", "soft-anti-affinity")
	if err != nil {
		t.Fatal(err)
	}
	again, err := g.Ensure(t.Context(), caller, "kube-abcde", "soft-anti-affinity")
	if err != nil {
		t.Fatal(err)
	}
	if id == "" || id == "other" || again != id {
		t.Errorf("Ensure returned %q then %q; want one new group of the caller's project", id, again)
	}
	var mine []osfake.ServerGroup
	for _, sg := range fake.Groups() {
		if sg.ProjectID == "p1" {
			mine = append(mine, sg)
		}
	}
	if len(mine) != 1 || mine[0].Policy != "soft-anti-affinity" || mine[0].Name != "kube-abcde" {
		t.Errorf("groups of p1 = %+v", mine)
	}
	for _, c := range fake.Calls() {
		if c.Token != "user-token" {
			t.Errorf("%s used token %q, want the user's", c, c.Token)
		}
		if c.Query.Get("all_projects") == "true" {
			t.Errorf("%s lists all projects with a user token", c)
		}
	}
}

func TestServerGroupsDelete(t *testing.T) {
	g, fake, caller := newServerGroupsHarness(t)
	if _, err := g.Ensure(t.Context(), caller, "kube-abcde-default-worker", "anti-affinity"); err != nil {
		t.Fatal(err)
	}
	// The background deletion has no user token: service credentials and
	// all_projects.
	if err := g.Delete(t.Context(), Caller{Service: true}, "kube-abcde-default-worker"); err != nil {
		t.Fatal(err)
	}
	if n := len(fake.Groups()); n != 0 {
		t.Errorf("%d groups left", n)
	}
	calls := fake.Calls()
	last := calls[len(calls)-1]
	if last.Method != http.MethodDelete || last.Token != osfake.ServiceToken {
		t.Errorf("last call %s with token %q, want a DELETE with the service token", last, last.Token)
	}
	if !slices.ContainsFunc(calls, func(c osfake.Call) bool { return c.Query.Get("all_projects") == "true" }) {
		t.Error("the service listing did not ask for all projects")
	}
	// A group that is already gone is not an error.
	if err := g.Delete(t.Context(), caller, "kube-abcde-default-worker"); err != nil {
		t.Errorf("delete of a missing group: %v", err)
	}
}

func TestServerGroupsErrors(t *testing.T) {
	g, fake, caller := newServerGroupsHarness(t)
	fake.Refuse(http.StatusForbidden)
	_, err := g.Ensure(t.Context(), caller, "kube-abcde", "anti-affinity")
	if !errors.Is(err, ErrForbidden) {
		t.Errorf("Ensure on 403: %v, want ErrForbidden", err)
	}
	fake.Refuse(0)

	_, err = g.Ensure(t.Context(), Caller{Token: "unknown", ProjectID: "p1", ServiceCatalog: caller.ServiceCatalog}, "kube-abcde", "anti-affinity")
	if err == nil {
		t.Error("Ensure with an unknown token succeeded")
	}

	fake.Hang(true)
	start := time.Now()
	_, err = g.Ensure(t.Context(), caller, "kube-abcde", "anti-affinity")
	if err == nil {
		t.Error("Ensure against a hanging Nova succeeded")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Ensure took %v against a hanging Nova, want about the 2 s timeout", took)
	}
}

func TestCallerRedactsToken(t *testing.T) {
	c := Caller{Token: "secret-token", UserID: "u1"}
	for _, s := range []string{c.String(), c.GoString()} {
		if s == "" || strings.Contains(s, "secret-token") {
			t.Errorf("Caller rendered as %q", s)
		}
	}
	ac := AppCredential{ID: "id", Secret: "s3cr3t"}
	for _, s := range []string{ac.String(), ac.GoString()} {
		if strings.Contains(s, "s3cr3t") {
			t.Errorf("AppCredential rendered as %q", s)
		}
	}
}
