package db

import (
	"database/sql/driver"
	"fmt"
	"time"

	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// Column wrappers: each is a sql.Scanner for reads and a driver.Valuer for
// writes, so one binds list per table serves SELECT, INSERT and UPDATE.

// str maps a nullable text column to a plain string (NULL reads as "").
type str struct{ p *string }

func (c str) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*c.p = ""
	case string:
		*c.p = v
	case []byte:
		*c.p = string(v)
	default:
		return fmt.Errorf("cannot scan %T into a string", src)
	}
	return nil
}

func (c str) Value() (driver.Value, error) { return *c.p, nil }

// ts is a created_at column: time.Time, NULL reads as the zero time.
type ts struct {
	p *time.Time
	d *dialect
}

func (c ts) Scan(src any) error {
	t, ok, err := scanTime(src)
	if err != nil {
		return err
	}
	if ok {
		*c.p = t
	} else {
		*c.p = time.Time{}
	}
	return nil
}

func (c ts) Value() (driver.Value, error) {
	if c.p.IsZero() {
		return nil, nil
	}
	return c.d.timeValue(*c.p), nil
}

// nts is a nullable timestamp column (*time.Time).
type nts struct {
	p **time.Time
	d *dialect
}

func (c nts) Scan(src any) error {
	t, ok, err := scanTime(src)
	if err != nil {
		return err
	}
	if ok {
		*c.p = &t
	} else {
		*c.p = nil
	}
	return nil
}

func (c nts) Value() (driver.Value, error) {
	if *c.p == nil {
		return nil, nil
	}
	return c.d.timeValue(**c.p), nil
}

// timeLayouts are the text forms SQLite rows may hold: SQLAlchemy's, and
// the variants other writers use.
var timeLayouts = []string{
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02 15:04",
	"2006-01-02",
}

func scanTime(src any) (time.Time, bool, error) {
	switch v := src.(type) {
	case nil:
		return time.Time{}, false, nil
	case time.Time:
		// Naive timestamps are UTC; drivers hand them over in UTC or
		// without a zone, keep the wall clock.
		return time.Date(v.Year(), v.Month(), v.Day(), v.Hour(), v.Minute(), v.Second(), v.Nanosecond(), time.UTC), true, nil
	case []byte:
		return parseTimeText(string(v))
	case string:
		return parseTimeText(v)
	}
	return time.Time{}, false, fmt.Errorf("cannot scan %T into a time", src)
}

func parseTimeText(s string) (time.Time, bool, error) {
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), true, nil
		}
	}
	return time.Time{}, false, fmt.Errorf("cannot parse time %q", s)
}

// textOf returns a TEXT column value as a string (ok=false for NULL).
func textOf(src any) (string, bool, error) {
	switch v := src.(type) {
	case nil:
		return "", false, nil
	case string:
		return v, true, nil
	case []byte:
		return string(v), true, nil
	}
	return "", false, fmt.Errorf("cannot scan %T into a JSON column", src)
}

// jsonMap is a JSONEncodedDict column of strings. NULL reads as nil; nil
// writes "{}" as Magnum does.
type jsonMap struct{ p *map[string]string }

func (c jsonMap) Scan(src any) error {
	s, ok, err := textOf(src)
	if err != nil || !ok {
		*c.p = nil
		return err
	}
	m, err := decodeStringMap(s)
	if err != nil {
		return fmt.Errorf("decode JSON object %q: %w", s, err)
	}
	if m == nil {
		m = map[string]string{}
	}
	*c.p = m
	return nil
}

func (c jsonMap) Value() (driver.Value, error) {
	if *c.p == nil {
		return "{}", nil
	}
	return pyJSON(*c.p)
}

// jsonList is a JSONEncodedList column of strings. NULL reads as nil; nil
// writes "[]".
type jsonList struct{ p *[]string }

func (c jsonList) Scan(src any) error {
	s, ok, err := textOf(src)
	if err != nil || !ok {
		*c.p = nil
		return err
	}
	l, err := decodeStringList(s)
	if err != nil {
		return fmt.Errorf("decode JSON array %q: %w", s, err)
	}
	if l == nil {
		l = []string{}
	}
	*c.p = l
	return nil
}

func (c jsonList) Value() (driver.Value, error) {
	if *c.p == nil {
		return "[]", nil
	}
	return pyJSON(*c.p)
}

// jsonTaints is nodegroup.node_taints, a JSONEncodedList of objects.
type jsonTaints struct{ p *[]magnum.NodeTaint }

func (c jsonTaints) Scan(src any) error {
	s, ok, err := textOf(src)
	if err != nil || !ok {
		*c.p = nil
		return err
	}
	l, err := decodeMapList(s)
	if err != nil {
		return fmt.Errorf("decode JSON array %q: %w", s, err)
	}
	out := make([]magnum.NodeTaint, len(l))
	for i, m := range l {
		out[i] = m
	}
	*c.p = out
	return nil
}

func (c jsonTaints) Value() (driver.Value, error) {
	if *c.p == nil {
		return "[]", nil
	}
	l := make([]map[string]string, len(*c.p))
	for i, m := range *c.p {
		l[i] = m
	}
	return pyJSON(l)
}
