package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// execer is what *sql.DB and *sql.Tx have in common.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Queries holds the repository methods (one file per table). DB embeds one
// that runs each statement on its own; Tx embeds one bound to the
// transaction.
type Queries struct {
	ex   execer
	d    *dialect
	now  func() time.Time
	lock bool // append FOR UPDATE to single-row and list reads
}

// Scope restricts reads to the rows a caller may see.
type Scope struct {
	// AllProjects disables the project/user filter.
	AllProjects bool
	// ProjectID filters on project_id.
	ProjectID string
	// UserID filters on user_id when ProjectID is empty (a token without a
	// project, as Magnum's _add_tenant_filters does).
	UserID string
}

// AllProjects is the scope of internal callers (conductor, reconciler).
var AllProjects = Scope{AllProjects: true}

// ProjectScope returns the scope of one project.
func ProjectScope(projectID string) Scope { return Scope{ProjectID: projectID} }

// where returns the scope's condition ("" for all projects).
func (s Scope) where(hasUser bool) (string, []any, error) {
	switch {
	case s.AllProjects:
		return "", nil, nil
	case s.ProjectID != "":
		return "project_id = ?", []any{s.ProjectID}, nil
	case s.UserID != "" && hasUser:
		return "user_id = ?", []any{s.UserID}, nil
	case s.UserID != "":
		// A table without user_id: Magnum filters on project_id = NULL,
		// which matches no row.
		return "1 = 0", nil, nil
	}
	return "", nil, ErrEmptyScope
}

// ListOptions are the pagination parameters of a list (Magnum's marker,
// limit, sort_key, sort_dir).
type ListOptions struct {
	// Marker is the uuid of the last row of the previous page (for quotas:
	// the decimal id). Unknown → ErrNotFound.
	Marker string
	// Limit caps the rows returned (0: no limit).
	Limit int
	// SortKey is a column of the table ("" = "id"); others →
	// *InvalidSortKeyError.
	SortKey string
	// SortDir is "asc" (default) or "desc"; others → ErrInvalidSortDir.
	SortDir string
}

// cond accumulates WHERE conditions and their arguments.
type cond struct {
	parts []string
	args  []any
}

func (c *cond) add(part string, args ...any) {
	if part == "" {
		return
	}
	c.parts = append(c.parts, "("+part+")")
	c.args = append(c.args, args...)
}

func (c *cond) sql() string {
	if len(c.parts) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(c.parts, " AND ")
}

// table describes one Magnum table for the generic statements below. cols
// lists every column but id, in the order binds returns them.
type table[T any] struct {
	name string
	cols []string
	// markerCol is the column a pagination marker names (uuid or id).
	markerCol string
	id        func(*T) *int64
	created   func(*T) *time.Time
	updated   func(*T) **time.Time
	binds     func(*Queries, *T) []any
}

func (t *table[T]) selectSQL() string {
	return "SELECT id, " + strings.Join(quoteAll(t.cols), ", ") + " FROM " + quote(t.name)
}

func quoteAll(cols []string) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = quote(c)
	}
	return out
}

// getOne runs a SELECT of t with the condition and returns the single row.
func getOne[T any](ctx context.Context, q *Queries, t *table[T], c cond) (*T, error) {
	rows, err := all(ctx, q, t, c, "", 2)
	if err != nil {
		return nil, err
	}
	switch len(rows) {
	case 0:
		return nil, fmt.Errorf("select %s: %w", t.name, ErrNotFound)
	case 1:
		return &rows[0], nil
	}
	return nil, fmt.Errorf("select %s: %d rows match a unique key", t.name, len(rows))
}

// all runs a SELECT of t with the condition, order and limit.
func all[T any](ctx context.Context, q *Queries, t *table[T], c cond, order string, limit int) ([]T, error) {
	query := t.selectSQL() + c.sql()
	if order != "" {
		query += " ORDER BY " + order
	}
	query += q.d.limit(limit)
	if q.lock {
		query += q.d.forUpdate()
	}
	rows, err := q.ex.QueryContext(ctx, q.d.rebind(query), c.args...)
	if err != nil {
		return nil, fmt.Errorf("select %s: %w", t.name, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		dest := append([]any{t.id(&v)}, t.binds(q, &v)...)
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("scan %s: %w", t.name, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("select %s: %w", t.name, err)
	}
	return out, nil
}

// list runs a paginated SELECT: Magnum's sort keys [sort_key, id] in one
// direction and keyset pagination after the marker row (oslo.db
// paginate_query), with NULLs sorting first as in MariaDB.
func list[T any](ctx context.Context, q *Queries, t *table[T], c cond, o ListOptions) ([]T, error) {
	key := o.SortKey
	if key == "" {
		key = "id"
	}
	if key != "id" && !slices.Contains(t.cols, key) {
		return nil, &InvalidSortKeyError{Key: key}
	}
	dir := o.SortDir
	if dir == "" {
		dir = "asc"
	}
	if dir != "asc" && dir != "desc" {
		return nil, fmt.Errorf("%w: %s", ErrInvalidSortDir, dir)
	}
	col := quote(key)
	if o.Marker != "" {
		var (
			mid   int64
			mnull bool
		)
		var markerArg any = o.Marker
		if t.markerCol == "id" {
			n, err := strconv.ParseInt(o.Marker, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("marker %s: %w", o.Marker, ErrNotFound)
			}
			markerArg = n
		}
		mq := "SELECT id, CASE WHEN " + col + " IS NULL THEN 1 ELSE 0 END FROM " + quote(t.name) +
			" WHERE " + quote(t.markerCol) + " = ?"
		err := q.ex.QueryRowContext(ctx, q.d.rebind(mq), markerArg).Scan(&mid, &mnull)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("marker %s: %w", o.Marker, ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("select %s marker: %w", t.name, err)
		}
		mv := "(SELECT m." + col + " FROM " + quote(t.name) + " m WHERE m.id = ?)"
		switch {
		case key == "id" && dir == "asc":
			c.add("id > ?", mid)
		case key == "id":
			c.add("id < ?", mid)
		case dir == "asc" && mnull:
			c.add(col+" IS NOT NULL OR id > ?", mid)
		case dir == "asc":
			c.add(col+" > "+mv+" OR ("+col+" = "+mv+" AND id > ?)", mid, mid, mid)
		case mnull:
			c.add(col+" IS NULL AND id < ?", mid)
		default:
			c.add(col+" < "+mv+" OR "+col+" IS NULL OR ("+col+" = "+mv+" AND id < ?)", mid, mid, mid)
		}
	}
	order := q.d.orderTerm(col, dir)
	if key != "id" {
		order += ", " + q.d.orderTerm("id", dir)
	}
	return all(ctx, q, t, c, order, o.Limit)
}

// argOf returns the value to write for a bind (a field pointer or a
// column wrapper).
func argOf(b any) (any, error) {
	if v, ok := b.(driver.Valuer); ok {
		return v.Value()
	}
	rv := reflect.ValueOf(b).Elem()
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil, nil
		}
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.String:
		// Named string types (magnum.Status) go to the drivers as strings.
		return rv.String(), nil
	case reflect.Int:
		return rv.Int(), nil
	}
	return rv.Interface(), nil
}

// insert writes v, setting created_at (now, unless set) and id.
func insert[T any](ctx context.Context, q *Queries, t *table[T], v *T) error {
	if t.created != nil {
		if ca := t.created(v); ca.IsZero() {
			*ca = q.now()
		}
		*t.created(v) = q.d.truncTime(*t.created(v))
	}
	binds := t.binds(q, v)
	args := make([]any, len(binds))
	for i, b := range binds {
		a, err := argOf(b)
		if err != nil {
			return fmt.Errorf("insert %s: column %s: %w", t.name, t.cols[i], err)
		}
		args[i] = a
	}
	cols := t.cols
	presetID := *t.id(v)
	if presetID != 0 {
		// Magnum stores an "id" given in a create body (nodegroups,
		// quotas) as the row's primary key.
		cols = append([]string{"id"}, cols...)
		args = append([]any{presetID}, args...)
	}
	query := "INSERT INTO " + quote(t.name) + " (" + strings.Join(quoteAll(cols), ", ") + ") VALUES (" +
		strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	if presetID != 0 {
		if _, err := q.ex.ExecContext(ctx, q.d.rebind(query), args...); err != nil {
			return q.writeErr("insert", t.name, err)
		}
		if q.d.name == DialectPostgres {
			// Keep the serial ahead of the explicit id.
			_, err := q.ex.ExecContext(ctx, "SELECT setval(pg_get_serial_sequence('"+t.name+"', 'id'), "+
				"(SELECT MAX(id) FROM "+quote(t.name)+"))")
			if err != nil {
				return fmt.Errorf("insert %s: advance id sequence: %w", t.name, err)
			}
		}
		return nil
	}
	if q.d.returningID() {
		err := q.ex.QueryRowContext(ctx, q.d.rebind(query+" RETURNING id"), args...).Scan(t.id(v))
		return q.writeErr("insert", t.name, err)
	}
	res, err := q.ex.ExecContext(ctx, q.d.rebind(query), args...)
	if err != nil {
		return q.writeErr("insert", t.name, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("insert %s: last insert id: %w", t.name, err)
	}
	*t.id(v) = id
	return nil
}

func (q *Queries) writeErr(op, tbl string, err error) error {
	if err == nil {
		return nil
	}
	if q.d.isDuplicate(err) {
		return fmt.Errorf("%s %s: %w: %v", op, tbl, ErrDuplicate, err)
	}
	return fmt.Errorf("%s %s: %w", op, tbl, err)
}

// update writes the named columns of v (by id) and sets updated_at to now.
func update[T any](ctx context.Context, q *Queries, t *table[T], v *T, cols []string) error {
	binds := t.binds(q, v)
	var sets []string
	var args []any
	for _, c := range cols {
		if c == "updated_at" {
			continue
		}
		i := slices.Index(t.cols, c)
		if i < 0 {
			return fmt.Errorf("update %s: unknown column %q", t.name, c)
		}
		a, err := argOf(binds[i])
		if err != nil {
			return fmt.Errorf("update %s: column %s: %w", t.name, c, err)
		}
		sets = append(sets, quote(c)+" = ?")
		args = append(args, a)
	}
	if t.updated != nil {
		now := q.d.truncTime(q.now())
		*t.updated(v) = &now
		sets = append(sets, quote("updated_at")+" = ?")
		args = append(args, q.d.timeValue(now))
	}
	if len(sets) == 0 {
		return nil
	}
	args = append(args, *t.id(v))
	query := "UPDATE " + quote(t.name) + " SET " + strings.Join(sets, ", ") + " WHERE id = ?"
	res, err := q.ex.ExecContext(ctx, q.d.rebind(query), args...)
	if err != nil {
		return q.writeErr("update", t.name, err)
	}
	return affected(res, "update "+t.name)
}

// deleteWhere deletes the rows matching c and returns how many there were.
func deleteWhere(ctx context.Context, q *Queries, tbl string, c cond) (int64, error) {
	res, err := q.ex.ExecContext(ctx, q.d.rebind("DELETE FROM "+quote(tbl)+c.sql()), c.args...)
	if err != nil {
		return 0, fmt.Errorf("delete %s: %w", tbl, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("delete %s: %w", tbl, err)
	}
	return n, nil
}

func affected(res sql.Result, tbl string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: rows affected: %w", tbl, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", tbl, ErrNotFound)
	}
	return nil
}

// deleteOne deletes the rows matching c; none → ErrNotFound.
func deleteOne(ctx context.Context, q *Queries, tbl string, c cond) error {
	n, err := deleteWhere(ctx, q, tbl, c)
	if err == nil && n == 0 {
		err = fmt.Errorf("delete %s: %w", tbl, ErrNotFound)
	}
	return err
}

// count runs SELECT COUNT(*) over tbl with the condition.
func count(ctx context.Context, q *Queries, tbl string, c cond) (int, error) {
	var n int
	err := q.ex.QueryRowContext(ctx, q.d.rebind("SELECT COUNT(*) FROM "+quote(tbl)+c.sql()), c.args...).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count %s: %w", tbl, err)
	}
	return n, nil
}

// inList returns "col IN (?, ?, …)" for n values.
func inList(col string, n int) string {
	return col + " IN (" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
}

func anySlice[E any](s []E) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
