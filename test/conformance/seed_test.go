package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
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
