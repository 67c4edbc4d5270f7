package takeover

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// record is one request of sample-data-expected-responses.json and
// Magnum's answer to it.
type record struct {
	Request struct {
		Method  string            `json:"method"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	} `json:"request"`
	Response struct {
		Status  int               `json:"status"`
		Headers map[string]string `json:"headers"`
		Body    json.RawMessage   `json:"body"`
	} `json:"response"`
}

// comparedHeaders are the response headers compared with Magnum's: the
// version negotiation headers and Content-Type. A header Magnum did not
// send must be absent.
var comparedHeaders = []string{
	"OpenStack-API-Minimum-Version",
	"OpenStack-API-Maximum-Version",
	"OpenStack-API-Version",
	"Vary",
	"Content-Type",
}

// TestTakeoverMariaDB loads Magnum's schema and sample rows into a fresh
// MariaDB database, adopts it with `db adopt` (no table may change) and
// replays the recorded requests against `openkeel-magnum api`.
func TestTakeoverMariaDB(t *testing.T) {
	t.Parallel()
	records := loadRecords(t)
	conn, dbURL := freshMySQL(t)
	if n := execScript(t, conn, readSpec(t, "schema-mariadb.sql"), nil); n < 8 {
		t.Fatalf("schema-mariadb.sql: %d statements", n)
	}
	n := 0
	execScript(t, conn, readSpec(t, "sample-data-mariadb.sql"), func(s string) bool {
		if strings.HasPrefix(s, "INSERT INTO") {
			n++
		}
		return false
	})
	if n != 28 {
		t.Fatalf("sample-data-mariadb.sql: %d INSERTs, want 28", n)
	}
	takeover(t, conn, "mysql", dbURL, records)
}

// TestTakeoverPostgreSQL does the same on PostgreSQL: Magnum's schema
// there (schema-postgresql.sql) with the same sample rows.
func TestTakeoverPostgreSQL(t *testing.T) {
	t.Parallel()
	records := loadRecords(t)
	conn, dbURL := freshPostgres(t)
	execScript(t, conn, readSpec(t, "schema-postgresql.sql"), func(s string) bool {
		// Session settings of pg_dump that need psql or a role we lack.
		return strings.HasPrefix(s, "SET ") || strings.HasPrefix(s, "SELECT pg_catalog.set_config") ||
			strings.Contains(s, "OWNER TO")
	})
	loadSampleRowsPostgres(t, conn)
	takeover(t, conn, "postgresql", dbURL, records)
}

func loadRecords(t *testing.T) []record {
	t.Helper()
	var records []record
	if err := json.Unmarshal([]byte(readSpec(t, "sample-data-expected-responses.json")), &records); err != nil {
		t.Fatal(err)
	}
	if len(records) != 29 {
		t.Fatalf("%d recorded requests, want 29", len(records))
	}
	return records
}

// takeover adopts the loaded database with the binary, checks that no
// Magnum table changed, serves it and replays records.
func takeover(t *testing.T, conn *sql.DB, dialect, dbURL string, records []record) {
	before := snapshot(t, conn, dialect, nil)
	if len(before) != 8 {
		t.Fatalf("%d tables before adopt, want 8 (Magnum's 7 and alembic_version)", len(before))
	}
	for tbl, rows := range map[string]int{"cluster": 3, "nodegroup": 7, "x509keypair": 12, "alembic_version": 1} {
		if n := len(strings.Split(before[tbl].Rows, "\n")); before[tbl].Rows == "" || n != rows {
			t.Fatalf("%s holds %d rows before adopt, want %d", tbl, n, rows)
		}
	}
	var names []string
	for tbl := range before {
		names = append(names, tbl)
	}
	conf, base := writeConfig(t, "[DEFAULT]\nauth_strategy = noauth\n\n"+
		"[database]\nconnection = "+dbURL+"\n\n"+
		"[certificates]\ncert_manager_type = x509keypair\n")

	// Serving before adopt is refused with the command that fixes it.
	if out, code := runBinary(t, conf, "api"); code == 0 || !strings.Contains(out, "db adopt") {
		t.Errorf("api before adopt: exit %d, output %q", code, out)
	}
	out, code := runBinary(t, conf, "db", "adopt")
	if code != 0 {
		t.Fatalf("db adopt: exit %d\n%s", code, out)
	}
	t.Logf("db adopt: %s", strings.TrimSpace(out))
	// Adopt adds our indexes and changes nothing else.
	compareSnapshots(t, "db adopt", before, withoutOurIndexes(t, snapshot(t, conn, dialect, names)))
	if out, code := runBinary(t, conf, "db", "adopt"); code != 0 {
		t.Errorf("db adopt again: exit %d\n%s", code, out)
	}

	startAPI(t, conf, base)
	replay(t, base, records)
	// The recorded requests only read.
	compareSnapshots(t, "serving the recorded requests", before, withoutOurIndexes(t, snapshot(t, conn, dialect, names)))
}

// replay sends every record to base and compares status, the version
// headers, Content-Type and the body with Magnum's answer (links rebased
// on base; the time-dependent state of mservices ignored).
func replay(t *testing.T, base string, records []record) {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	pass := 0
	for i, rec := range records {
		name := rec.Request.Method + " " + rec.Request.URL
		if roles := rec.Request.Headers["X-Roles"]; strings.Contains(","+roles+",", ",admin,") {
			name += " (admin)"
		}
		if v := rec.Request.Headers["OpenStack-API-Version"]; v != "" {
			name += " [" + v + "]"
		}
		req, err := http.NewRequest(rec.Request.Method, base+rec.Request.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range rec.Request.Headers {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Errorf("#%d %s: %v", i, name, err)
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Errorf("#%d %s: read body: %v", i, name, err)
			continue
		}
		var problems []string
		if resp.StatusCode != rec.Response.Status {
			problems = append(problems, "status: want "+strconv.Itoa(rec.Response.Status)+", got "+strconv.Itoa(resp.StatusCode))
		}
		want := http.Header{}
		for k, v := range rec.Response.Headers {
			want.Set(k, v)
		}
		for _, h := range comparedHeaders {
			w, g := want.Values(h), resp.Header.Values(h)
			if strings.Join(w, ", ") != strings.Join(g, ", ") {
				problems = append(problems, "header "+h+": want "+quoteList(w)+", got "+quoteList(g))
			}
		}
		wantBody := bytes.ReplaceAll(rec.Response.Body, []byte("http://localhost/"), []byte(base+"/"))
		wb, werr := decodeBody(wantBody)
		gb, gerr := decodeBody(body)
		switch {
		case werr != nil:
			t.Fatalf("#%d %s: recorded body: %v", i, name, werr)
		case gerr != nil:
			problems = append(problems, "body is not JSON ("+gerr.Error()+"): "+truncate(string(body), 500))
		default:
			if strings.HasPrefix(rec.Request.URL, "/v1/mservices") {
				dropServiceState(wb)
				dropServiceState(gb)
			}
			if diff := cmp.Diff(wb, gb); diff != "" {
				problems = append(problems, "body (-magnum +openkeel):\n"+diff)
			}
		}
		if len(problems) > 0 {
			t.Errorf("#%d %s: %d mismatch(es):\n  %s", i, name, len(problems), strings.Join(problems, "\n  "))
			continue
		}
		pass++
	}
	t.Logf("%d/%d recorded requests answered identically", pass, len(records))
}

func decodeBody(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, io.ErrUnexpectedEOF
	}
	return v, nil
}

// dropServiceState removes the state of each mservices entry: up or down
// depends on the time since last_seen_up.
func dropServiceState(body any) {
	m, _ := body.(map[string]any)
	list, _ := m["mservices"].([]any)
	for _, s := range list {
		if svc, ok := s.(map[string]any); ok {
			delete(svc, "state")
		}
	}
}

func quoteList(v []string) string {
	if len(v) == 0 {
		return "(absent)"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
