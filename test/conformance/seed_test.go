package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/openkeel/openkeel-magnum/internal/db"
)

// jsonColumns are Magnum's JSONEncodedDict / JSONEncodedList columns, with
// what the object layer stores for None ("{}" or "[]").
var jsonColumns = map[string]map[string]string{
	"cluster":          {"labels": "{}", "health_status_reason": "{}"},
	"cluster_template": {"labels": "{}"},
	"federation":       {"member_ids": "[]", "properties": "{}"},
	"nodegroup":        {"labels": "{}", "node_addresses": "[]", "node_labels": "{}", "node_taints": "[]"},
}

// sqliteTime is how SQLAlchemy writes a naive UTC datetime into SQLite.
const sqliteTime = "2006-01-02 15:04:05.000000"

// seedDB inserts the record's db_before, table by table in name order and
// rows in recorded (id) order, with the recorded ids. JSON columns are
// stored in Python's json.dumps format with the recorded key order,
// booleans as booleans, datetimes as SQLAlchemy's naive UTC text.
func seedDB(t *testing.T, d *db.DB, tables map[string][]json.RawMessage) {
	t.Helper()
	names := make([]string, 0, len(tables))
	for n := range tables {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, table := range names {
		for _, raw := range tables[table] {
			var row map[string]json.RawMessage
			if err := json.Unmarshal(raw, &row); err != nil {
				t.Fatalf("seed %s: %v", table, err)
			}
			cols := make([]string, 0, len(row))
			for c := range row {
				cols = append(cols, c)
			}
			sort.Strings(cols)
			args := make([]any, len(cols))
			quoted := make([]string, len(cols))
			for i, c := range cols {
				quoted[i] = `"` + c + `"`
				v, err := columnValue(table, c, row[c])
				if err != nil {
					t.Fatalf("seed %s.%s: %v", table, c, err)
				}
				args[i] = v
			}
			q := fmt.Sprintf(`INSERT INTO "%s" (%s) VALUES (%s)`, table, strings.Join(quoted, ", "),
				strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", "))
			if _, err := d.SQL().ExecContext(t.Context(), q, args...); err != nil {
				t.Fatalf("seed %s: %v", table, err)
			}
		}
	}
}

// columnValue converts one recorded column value to what Magnum stored.
func columnValue(table, col string, raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, nil
	}
	switch raw[0] {
	case '{', '[':
		return pyJSON(raw)
	case 'n':
		if def, ok := jsonColumns[table][col]; ok {
			return def, nil
		}
		return nil, nil
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		if strings.HasSuffix(col, "_at") || col == "last_seen_up" {
			for _, layout := range []string{"2006-01-02T15:04:05.999999", "2006-01-02 15:04:05.999999"} {
				if ts, err := time.Parse(layout, s); err == nil {
					return ts.Format(sqliteTime), nil
				}
			}
		}
		return s, nil
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n, nil
	}
	return strconv.ParseFloat(string(raw), 64)
}

// pyJSON re-encodes JSON text the way Python's json.dumps writes it with
// its defaults: ", " and ": " separators, non-ASCII characters as \uXXXX
// escapes (surrogate pairs beyond the BMP), keys in their recorded order.
func pyJSON(raw []byte) (string, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return "", err
	}
	src := compact.Bytes()
	var b strings.Builder
	inString, escaped := false, false
	for i := 0; i < len(src); {
		c := src[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(src[i:])
			if r > 0xFFFF {
				r -= 0x10000
				fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
			i += size
			continue
		}
		b.WriteByte(c)
		i++
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && (c == ',' || c == ':'):
			b.WriteByte(' ')
		}
	}
	return b.String(), nil
}

// pyKeyRe finds the keys of a Python dict repr.
var pyKeyRe = regexp.MustCompile(`'([A-Za-z_][A-Za-z0-9_]*)': `)

// replayRequest builds the request to send. The corpus stores JSON request
// bodies with their keys sorted, but webtest sent them in the test's
// insertion order, which Magnum shows when it quotes the whole body in a
// WSME error ("Value: '{'uuid': ..., 'name': ...}'"). When the recorded
// answer quotes the body, the body is sent again with its keys in the
// quoted order, i.e. as the test sent it.
func replayRequest(rec Record) (*http.Request, error) {
	req, err := rec.NewHTTPRequest()
	if err != nil || rec.Request.BodyText != nil {
		return req, err
	}
	var body map[string]json.RawMessage
	if json.Unmarshal(rec.Request.Body, &body) != nil || len(body) == 0 {
		return req, nil
	}
	var resp struct {
		Errors []struct {
			Detail string `json:"detail"`
		} `json:"errors"`
	}
	if json.Unmarshal(rec.Response.Body, &resp) != nil || len(resp.Errors) == 0 {
		return req, nil
	}
	detail := resp.Errors[0].Detail
	i := strings.Index(detail, "Value: '{")
	if i < 0 {
		return req, nil
	}
	var order []string
	used := map[string]bool{}
	for _, m := range pyKeyRe.FindAllStringSubmatch(detail[i:], -1) {
		if _, ok := body[m[1]]; ok && !used[m[1]] {
			used[m[1]] = true
			order = append(order, m[1])
		}
	}
	for _, k := range sortedKeys(body) {
		if !used[k] {
			order = append(order, k)
		}
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for n, k := range order {
		if n > 0 {
			b.WriteString(", ")
		}
		kj, _ := json.Marshal(k)
		b.Write(kj)
		b.WriteString(": ")
		b.Write(body[k])
	}
	b.WriteByte('}')
	req.Body = io.NopCloser(bytes.NewReader(b.Bytes()))
	req.ContentLength = int64(b.Len())
	return req, nil
}
