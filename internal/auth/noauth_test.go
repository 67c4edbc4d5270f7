package auth

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

func TestNoAuth(t *testing.T) {
	tests := []struct {
		name   string
		header http.Header
		want   magnum.RequestContext
	}{
		{
			name:   "defaults make an admin of the development project",
			header: http.Header{},
			want: magnum.RequestContext{
				UserID: NoAuthUserID, UserName: NoAuthUserName, UserDomainID: "default", UserDomainName: "Default",
				ProjectID: NoAuthProjectID, ProjectName: NoAuthProjectName, ProjectDomainID: "default",
				Roles: []string{"admin", "member", "reader"}, IsAdmin: true,
			},
		},
		{
			name: "headers set by keystonemiddleware name the caller",
			header: http.Header{
				"X-User-Id": {"u1"}, "X-User-Name": {"alice"}, "X-Project-Id": {"p1"}, "X-Project-Name": {"proj"},
				"X-User-Domain-Id": {"d1"}, "X-User-Domain-Name": {"D1"}, "X-Project-Domain-Id": {"d2"},
				"X-Roles": {"member, reader,"}, "X-Auth-Token": {"anything"},
				RequestIDHeader: {"req-1"},
			},
			want: magnum.RequestContext{
				RequestID: "req-1", AuthToken: "anything",
				UserID: "u1", UserName: "alice", UserDomainID: "d1", UserDomainName: "D1",
				ProjectID: "p1", ProjectName: "proj", ProjectDomainID: "d2",
				Roles: []string{"member", "reader"},
			},
		},
		{
			name:   "an empty X-Roles means no role",
			header: http.Header{"X-Roles": {""}},
			want: magnum.RequestContext{
				UserID: NoAuthUserID, UserName: NoAuthUserName, UserDomainID: "default", UserDomainName: "Default",
				ProjectID: NoAuthProjectID, ProjectName: NoAuthProjectName, ProjectDomainID: "default",
				Roles: []string{},
			},
		},
		{
			name:   "system and domain scope come from headers",
			header: http.Header{"X-System-Scope": {"all"}, "X-Domain-Id": {"default"}, "X-Domain-Name": {"Default"}, "X-Roles": {"Admin"}},
			want: magnum.RequestContext{
				UserID: NoAuthUserID, UserName: NoAuthUserName, UserDomainID: "default", UserDomainName: "Default",
				ProjectID: NoAuthProjectID, ProjectName: NoAuthProjectName, ProjectDomainID: "default",
				DomainID: "default", DomainName: "Default", SystemScope: "all",
				Roles: []string{"Admin"}, IsAdmin: true,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/v1/clusters", nil)
			r.Header = tt.header
			rc, err := NewNoAuth().Authenticate(r)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&tt.want, rc); diff != "" {
				t.Errorf("context (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequestIDFromContext(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/v1/clusters", nil)
	r.Header.Set(RequestIDHeader, "req-header")
	r = r.WithContext(magnum.WithRequestContext(r.Context(), &magnum.RequestContext{RequestID: "req-context"}))
	rc, _ := NewNoAuth().Authenticate(r)
	if rc.RequestID != "req-context" {
		t.Errorf("RequestID = %q, want the one already in the context", rc.RequestID)
	}
}
