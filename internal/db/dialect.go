package db

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// Dialect names accepted by Open.
const (
	DialectMySQL    = "mysql"
	DialectPostgres = "postgres"
	DialectSQLite   = "sqlite"
)

// dialect holds every difference between the three databases. Queries in
// this package are written once with `?` placeholders and double-quoted
// identifiers; rebind turns them into the dialect's form.
type dialect struct {
	name string
}

func newDialect(name string) (*dialect, error) {
	switch name {
	case DialectMySQL, DialectPostgres, DialectSQLite:
		return &dialect{name: name}, nil
	}
	return nil, fmt.Errorf("unsupported database dialect %q (want mysql, postgres or sqlite)", name)
}

// rebind rewrites a query written with `?` placeholders and "quoted"
// identifiers: `$n` placeholders for PostgreSQL, backquotes for MySQL.
// Queries of this package never contain string literals with `?` or `"`.
func (d *dialect) rebind(q string) string {
	switch d.name {
	case DialectPostgres:
		var b strings.Builder
		n := 0
		for i := 0; i < len(q); i++ {
			if q[i] == '?' {
				n++
				b.WriteByte('$')
				b.WriteString(strconv.Itoa(n))
				continue
			}
			b.WriteByte(q[i])
		}
		return b.String()
	case DialectMySQL:
		return strings.ReplaceAll(q, `"`, "`")
	}
	return q
}

// quote quotes an identifier in the neutral form that rebind understands.
func quote(ident string) string { return `"` + ident + `"` }

// limit returns the LIMIT clause for n rows (n <= 0: none).
func (d *dialect) limit(n int) string {
	if n <= 0 {
		return ""
	}
	return " LIMIT " + strconv.Itoa(n)
}

// forUpdate is the row-locking suffix of a SELECT inside a transaction.
// SQLite has no row locks: its transactions start with BEGIN IMMEDIATE
// (the write lock), see Open.
func (d *dialect) forUpdate() string {
	if d.name == DialectSQLite {
		return ""
	}
	return " FOR UPDATE"
}

// nameEquals compares a name column with a parameter the way MariaDB's
// *_general_ci collations do (Magnum's reference database): case-
// insensitive and ignoring trailing spaces. MariaDB does it natively;
// PostgreSQL compares lower-cased, right-trimmed values; SQLite's name
// columns are NOCASE, rtrim drops the trailing spaces.
//
// Deviation: Python Magnum on PostgreSQL compares names case-sensitively;
// we keep MariaDB's behaviour on every dialect so that a database moved
// between engines answers the same lookups.
func (d *dialect) nameEquals(col string) string {
	switch d.name {
	case DialectPostgres:
		return "rtrim(lower(" + col + ")) = rtrim(lower(CAST(? AS TEXT)))"
	case DialectSQLite:
		return "rtrim(" + col + ") = rtrim(?) COLLATE NOCASE"
	}
	return col + " = ?"
}

// orderTerm orders by col in direction dir with NULLs sorting as the
// smallest value, as in MariaDB and SQLite (PostgreSQL sorts them last by
// default).
func (d *dialect) orderTerm(col, dir string) string {
	t := col + " " + strings.ToUpper(dir)
	if d.name == DialectPostgres {
		if dir == "desc" {
			t += " NULLS LAST"
		} else {
			t += " NULLS FIRST"
		}
	}
	return t
}

// returningID reports whether INSERT … RETURNING id is used instead of
// LastInsertId (pgx does not implement LastInsertId).
func (d *dialect) returningID() bool { return d.name == DialectPostgres }

// timeValue converts a timestamp to the value stored, as Magnum stores it:
// naive UTC; MariaDB datetime keeps whole seconds, PostgreSQL microseconds,
// SQLite the text SQLAlchemy writes ("2006-01-02 15:04:05.000000").
func (d *dialect) timeValue(t time.Time) any {
	t = d.truncTime(t)
	if d.name == DialectSQLite {
		return t.Format(sqliteTimeFormat)
	}
	return t
}

const sqliteTimeFormat = "2006-01-02 15:04:05.000000"

// truncTime cuts t to what the column keeps, so that the struct a caller
// holds after a write equals what a read returns.
func (d *dialect) truncTime(t time.Time) time.Time {
	t = t.UTC()
	if d.name == DialectMySQL {
		return t.Truncate(time.Second)
	}
	return t.Truncate(time.Microsecond)
}

// isRetryable reports a deadlock, lock wait timeout, serialization failure
// or busy database: the transaction can be run again from the start.
func (d *dialect) isRetryable(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == 1213 || me.Number == 1205
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "40001" || pe.Code == "40P01"
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case 5, 6: // SQLITE_BUSY, SQLITE_LOCKED (and their extended codes)
			return true
		}
	}
	return false
}

// isDuplicate reports a unique-constraint violation.
func (d *dialect) isDuplicate(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == 1062
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "23505"
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() == 2067 || se.Code() == 1555 // SQLITE_CONSTRAINT_UNIQUE, _PRIMARYKEY
	}
	return false
}

// tableExistsSQL counts the tables named by its parameter in the current
// database/schema.
func (d *dialect) tableExistsSQL() string {
	switch d.name {
	case DialectMySQL:
		return "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?"
	case DialectPostgres:
		return "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?"
	}
	return "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
}

// columnsSQL lists (name, type, nullable) of the table named by its
// parameter, in column order, from the catalogue.
func (d *dialect) columnsSQL() string {
	switch d.name {
	case DialectMySQL:
		return `SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE = 'YES' FROM information_schema.COLUMNS
			WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`
	case DialectPostgres:
		return `SELECT column_name,
			CASE WHEN data_type = 'character varying' THEN 'varchar(' || character_maximum_length || ')' ELSE data_type END,
			is_nullable = 'YES'
			FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position`
	}
	return `SELECT name, type, "notnull" = 0 AND pk = 0 FROM pragma_table_info(?) ORDER BY cid`
}

// versionTableDDL creates our schema version table (Magnum's
// alembic_version is left to Magnum).
func (d *dialect) versionTableDDL() string {
	switch d.name {
	case DialectMySQL:
		return "CREATE TABLE IF NOT EXISTS " + versionTable + " (version int(11) NOT NULL, applied_at datetime NOT NULL, PRIMARY KEY (version)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
	case DialectPostgres:
		return "CREATE TABLE IF NOT EXISTS " + versionTable + " (version integer NOT NULL PRIMARY KEY, applied_at timestamp without time zone NOT NULL)"
	}
	return "CREATE TABLE IF NOT EXISTS " + versionTable + " (version INTEGER NOT NULL PRIMARY KEY, applied_at DATETIME NOT NULL)"
}
