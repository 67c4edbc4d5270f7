package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Sentinel errors. Callers map them to Magnum's client errors.
var (
	// ErrNotFound is returned when no row matches (get, update, delete, or
	// an unknown pagination marker).
	ErrNotFound = errors.New("row not found")
	// ErrDuplicate is returned when a write violates a unique constraint.
	ErrDuplicate = errors.New("duplicate row")
	// ErrInvalidSortKey is wrapped by *InvalidSortKeyError.
	ErrInvalidSortKey = errors.New("invalid sort key")
	// ErrInvalidSortDir is returned for a sort direction other than asc/desc.
	ErrInvalidSortDir = errors.New("invalid sort direction")
	// ErrEmptyScope is returned when a Scope names neither a project, a user
	// nor all projects (a programming error that would otherwise leak rows).
	ErrEmptyScope = errors.New("empty scope")
)

// InvalidSortKeyError names a sort_key that is not a column of the listed
// table. The API renders it as 400 `The sort_key value "<k>" is an invalid
// field for sorting`.
type InvalidSortKeyError struct{ Key string }

func (e *InvalidSortKeyError) Error() string {
	return fmt.Sprintf("the sort_key value %q is an invalid field for sorting", e.Key)
}

// Unwrap makes errors.Is(err, ErrInvalidSortKey) work.
func (e *InvalidSortKeyError) Unwrap() error { return ErrInvalidSortKey }

// Options tunes a DB. The zero value is usable.
type Options struct {
	// MaxOpenConns caps the connection pool (default 25; SQLite writes
	// always use a single connection).
	MaxOpenConns int
	// MaxIdleConns (default 5).
	MaxIdleConns int
	// ConnMaxLifetime recycles connections (default 1h; MariaDB closes idle
	// connections after wait_timeout).
	ConnMaxLifetime time.Duration
	// ConnectTimeout bounds Open's connection check and every new
	// connection (default 10s).
	ConnectTimeout time.Duration
	// MaxAttempts bounds the attempts of one InTx call (default 5).
	MaxAttempts int
	// RetryBackoff is the first wait between attempts, doubled each time
	// and jittered (default 20ms).
	RetryBackoff time.Duration
	// SQLiteBusyTimeout is how long SQLite waits for a lock (default 5s).
	SQLiteBusyTimeout time.Duration
	// Now is the clock for created_at/updated_at (default time.Now).
	Now func() time.Time
	// OnRetry, when set, is called before each retry of InTx with the
	// attempt that failed (1-based) and its error. For metrics and tests.
	OnRetry func(attempt int, err error)
}

func (o *Options) setDefaults() {
	if o.MaxOpenConns <= 0 {
		o.MaxOpenConns = 25
	}
	if o.MaxIdleConns <= 0 {
		o.MaxIdleConns = 5
	}
	if o.ConnMaxLifetime <= 0 {
		o.ConnMaxLifetime = time.Hour
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 10 * time.Second
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 5
	}
	if o.RetryBackoff <= 0 {
		o.RetryBackoff = 20 * time.Millisecond
	}
	if o.SQLiteBusyTimeout <= 0 {
		o.SQLiteBusyTimeout = 5 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// DB is an open Magnum database. Its Queries methods read and write outside
// any transaction (each statement on its own); use InTx for anything that
// must be atomic.
type DB struct {
	Queries
	read  *sql.DB
	write *sql.DB // == read except for SQLite files (single writer)
	opts  Options
}

// Dialect returns "mysql", "postgres" or "sqlite".
func (db *DB) Dialect() string { return db.d.name }

// SQL returns the underlying pool (for health checks and tests).
func (db *DB) SQL() *sql.DB { return db.read }

// Close closes the pools.
func (db *DB) Close() error {
	err := db.read.Close()
	if db.write != db.read {
		err = errors.Join(err, db.write.Close())
	}
	return err
}

// Open connects to the database named by dialect ("mysql", "postgres",
// "sqlite") and dsn (a go-sql-driver DSN, a pgx URL or keyword string, or a
// SQLite file name / file: URI) and checks that it answers. Errors name the
// host and the cause, never the password.
func Open(ctx context.Context, dialectName, dsn string, opts Options) (*DB, error) {
	opts.setDefaults()
	d, err := newDialect(dialectName)
	if err != nil {
		return nil, err
	}
	db := &DB{opts: opts}
	db.Queries = Queries{d: d, now: opts.Now}
	var where, secret string
	switch d.name {
	case DialectMySQL:
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			return nil, fmt.Errorf("invalid mysql DSN: %s", redact(err.Error(), dsn))
		}
		secret = cfg.Passwd
		cfg.ParseTime = true
		cfg.Loc = time.UTC
		// RowsAffected counts matched rows, so an update that changes
		// nothing is not mistaken for a missing row.
		cfg.ClientFoundRows = true
		// One round trip per statement instead of prepare, execute and
		// close: placeholders are filled in by the driver, which is safe
		// with the character sets mysqlInterpolationSafe accepts.
		if mysqlInterpolationSafe(dsn, cfg) {
			cfg.InterpolateParams = true
		}
		if cfg.Timeout == 0 {
			cfg.Timeout = opts.ConnectTimeout
		}
		where = cfg.Addr + "/" + cfg.DBName
		if cfg.Net != "tcp" {
			where = cfg.Net + " " + where
		}
		conn, err := mysql.NewConnector(cfg)
		if err != nil {
			return nil, fmt.Errorf("mysql database %s: %s", where, redact(err.Error(), secret))
		}
		db.read = sql.OpenDB(conn)
	case DialectPostgres:
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			return nil, fmt.Errorf("invalid postgres DSN: %s", redact(err.Error(), dsn))
		}
		secret = cfg.Password
		if cfg.ConnectTimeout == 0 {
			cfg.ConnectTimeout = opts.ConnectTimeout
		}
		where = net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port)) + "/" + cfg.Database
		db.read = stdlib.OpenDB(*cfg)
	case DialectSQLite:
		where = sqlitePath(dsn)
		if isSQLiteMemory(dsn) {
			// One connection: every connection to :memory: is a new database.
			db.read, err = sql.Open("sqlite", sqliteDSN(dsn, opts, "immediate"))
			if err != nil {
				return nil, fmt.Errorf("sqlite database %s: %w", where, err)
			}
			db.read.SetMaxOpenConns(1)
			db.write = db.read
		} else {
			db.read, err = sql.Open("sqlite", sqliteDSN(dsn, opts, "deferred"))
			if err == nil {
				db.write, err = sql.Open("sqlite", sqliteDSN(dsn, opts, "immediate"))
			}
			if err != nil {
				return nil, fmt.Errorf("sqlite database %s: %w", where, err)
			}
			// A single writer: SQLite allows one write transaction at a time;
			// queueing in the pool is cheaper than SQLITE_BUSY retries.
			db.write.SetMaxOpenConns(1)
		}
	}
	if db.write == nil {
		db.write = db.read
	}
	if d.name != DialectSQLite || db.read != db.write {
		db.read.SetMaxOpenConns(opts.MaxOpenConns)
	}
	db.read.SetMaxIdleConns(opts.MaxIdleConns)
	if d.name == DialectSQLite && db.read == db.write {
		// In memory: closing the only connection would drop the database.
		db.read.SetConnMaxLifetime(0)
	} else {
		db.read.SetConnMaxLifetime(opts.ConnMaxLifetime)
	}
	db.ex = db.read
	if db.write != db.read {
		// Statements outside InTx: reads on the read pool, writes on the
		// single writer connection.
		db.ex = splitExecer{read: db.read, write: db.write}
	}

	pctx, cancel := context.WithTimeout(ctx, opts.ConnectTimeout)
	defer cancel()
	if err := db.write.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("cannot connect to %s database %s: %s", d.name, where, redact(rootCause(err), secret))
	}
	return db, nil
}

// mysqlSafeCharsets are the connection character sets in which no byte of
// a multi-byte character is a backslash or a quote (UTF-8: every byte of
// a multi-byte character is >= 0x80; latin1 and ascii are single-byte), so
// the driver's backslash escaping of interpolated strings cannot be
// swallowed by a preceding lead byte as in big5, gbk, sjis, cp932 or
// gb18030.
var mysqlSafeCharsets = map[string]bool{"utf8mb4": true, "utf8mb3": true, "utf8": true, "latin1": true, "ascii": true}

// mysqlInterpolationSafe reports whether go-sql-driver's interpolateParams
// may be turned on for dsn: the DSN does not set interpolateParams itself
// (an explicit choice is kept), and every charset it names (none: the
// driver's utf8mb4) and its collation, if any, belong to
// mysqlSafeCharsets. A server in NO_BACKSLASH_ESCAPES mode is handled by
// the driver, which then doubles quotes instead.
func mysqlInterpolationSafe(dsn string, cfg *mysql.Config) bool {
	params := ""
	if i := strings.LastIndex(dsn, "/"); i >= 0 {
		_, params, _ = strings.Cut(dsn[i:], "?")
	}
	for _, kv := range strings.Split(params, "&") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "interpolateParams":
			return false
		case "charset":
			for _, cs := range strings.Split(v, ",") {
				if !mysqlSafeCharsets[strings.ToLower(cs)] {
					return false
				}
			}
		}
	}
	if c := strings.ToLower(cfg.Collation); c != "" {
		cs, _, _ := strings.Cut(c, "_")
		return mysqlSafeCharsets[cs]
	}
	return true
}

// rootCause shortens driver errors to their innermost useful message.
func rootCause(err error) string {
	var ne *net.OpError
	if errors.As(err, &ne) {
		return ne.Error()
	}
	return err.Error()
}

// redact removes secret from msg.
func redact(msg, secret string) string {
	if secret == "" {
		return msg
	}
	return strings.ReplaceAll(msg, secret, "***")
}

func isSQLiteMemory(dsn string) bool {
	p := sqlitePath(dsn)
	return p == ":memory:" || p == "" || strings.HasPrefix(p, ":memory:") || strings.Contains(dsn, "mode=memory")
}

func sqlitePath(dsn string) string {
	p := strings.TrimPrefix(dsn, "file:")
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return p
}

// sqliteDSN adds the connection settings: WAL journal, busy timeout, the
// transaction lock mode (BEGIN IMMEDIATE for the writer, so a transaction
// that reads then writes cannot fail to upgrade its lock). Settings of the
// given DSN are kept, except _txlock, which is ours to choose per pool.
func sqliteDSN(dsn string, opts Options, txlock string) string {
	path, rawQuery, _ := strings.Cut(dsn, "?")
	if path == "" {
		path = ":memory:"
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		q = url.Values{}
	}
	q.Del("_txlock")
	hasBusy := false
	for _, p := range q["_pragma"] {
		if strings.HasPrefix(strings.ToLower(p), "busy_timeout") {
			hasBusy = true
		}
	}
	if !hasBusy {
		q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.SQLiteBusyTimeout.Milliseconds()))
	}
	if !isSQLiteMemory(dsn) {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
	}
	q.Set("_txlock", txlock)
	if !strings.HasPrefix(path, "file:") {
		path = "file:" + path
	}
	return path + "?" + q.Encode()
}

// splitExecer sends writes to the SQLite writer connection and reads to
// the read pool.
type splitExecer struct {
	read, write *sql.DB
}

func (s splitExecer) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return s.write.ExecContext(ctx, query, args...)
}

func (s splitExecer) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return s.read.QueryContext(ctx, query, args...)
}

func (s splitExecer) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return s.read.QueryRowContext(ctx, query, args...)
}
