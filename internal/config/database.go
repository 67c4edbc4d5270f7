package config

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Database dialects returned in DatabaseTarget.Dialect.
const (
	DialectMySQL    = "mysql"
	DialectPostgres = "postgres"
	DialectSQLite   = "sqlite"
)

// DefaultConnectTimeout is the connect timeout put into a DSN when the URL
// does not ask for one, in seconds.
const DefaultConnectTimeout = 10

// DatabaseTarget is a [database]/connection URL translated for a Go driver.
type DatabaseTarget struct {
	// Dialect is DialectMySQL, DialectPostgres or DialectSQLite.
	Dialect string
	// DSN is the data source name for the driver: go-sql-driver/mysql for
	// mysql, a pgx connection URL for postgres, a modernc.org/sqlite DSN
	// for sqlite (":memory:" for an in-memory database, which the caller
	// must confine to a single connection). It contains the password.
	DSN string
	// Redacted is the original URL with the password replaced by "***",
	// safe for logs.
	Redacted string
}

// ErrDatabaseURL is matched (errors.Is) by every ParseDatabaseURL error.
var ErrDatabaseURL = errors.New("invalid database connection URL")

// sqlalchemyURL is SQLAlchemy's URL pattern (sqlalchemy/engine/url.py
// _parse_url): name://[user[:password]@][host|[ipv6]][:port][/database][?query].
var sqlalchemyURL = regexp.MustCompile(`(?s)^([\w+]+)://` +
	`(?:([^:/]*)(?::([^@]*))?@)?` +
	`(?:(?:\[([^/?]+)\]|([^/:?]+))?(?::([^/?]*))?)?` +
	`(?:/([^?]*))?` +
	`(?:\?(.*))?$`)

type sqlaURL struct {
	scheme, user, password, host, port, database string
	hasPassword                                  bool
	query                                        url.Values
	queryOrder                                   []string
}

func dbErr(redacted, format string, args ...any) error {
	return fmt.Errorf("%w %s: %s", ErrDatabaseURL, redacted, fmt.Sprintf(format, args...))
}

// redactURL masks the password of a SQLAlchemy URL, so that even a URL we
// reject can be named in an error. The mask runs from the password's start
// to the last '@' of the URL: SQLAlchemy ends the password at the first
// '@', but whatever an operator put before a later '@' is likely secret too.
func redactURL(raw string) string {
	if idx := sqlalchemyURL.FindStringSubmatchIndex(raw); idx != nil {
		start, end := idx[6], idx[7]
		if start < 0 {
			return raw
		}
		if at := strings.LastIndex(raw, "@"); at > end {
			end = at
		}
		return raw[:start] + "***" + raw[end:]
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	at := strings.LastIndex(rest, "@")
	switch {
	case !ok && strings.Contains(raw, "@"):
		return "<unparsable URL>"
	case !ok || at < 0:
		return raw
	}
	return scheme + "://***" + rest[at:]
}

func parseSQLAlchemyURL(raw string) (*sqlaURL, error) {
	red := redactURL(raw)
	m := sqlalchemyURL.FindStringSubmatch(raw)
	if m == nil {
		return nil, dbErr(red, "not of the form dialect[+driver]://[user[:password]@]host[:port]/database")
	}
	u := &sqlaURL{scheme: m[1], port: m[6], database: m[7]}
	u.user = pyUnquote(m[2])
	u.hasPassword = m[3] != "" || strings.Contains(rawUserInfo(raw), ":")
	u.password = pyUnquote(m[3])
	u.host = m[5]
	if m[4] != "" {
		u.host = m[4]
	}
	if u.port != "" {
		if p, perr := strconv.Atoi(u.port); perr != nil || p < 0 || p > 65535 {
			return nil, dbErr(red, "port %q is not a number between 0 and 65535", u.port)
		}
	}
	u.query = url.Values{}
	if m[8] != "" {
		for _, kv := range strings.Split(m[8], "&") {
			if kv == "" {
				continue
			}
			k, v, _ := strings.Cut(kv, "=")
			k, err1 := url.QueryUnescape(k)
			v, err2 := url.QueryUnescape(v)
			if err1 != nil || err2 != nil {
				return nil, dbErr(red, "bad escape in query")
			}
			if _, seen := u.query[k]; !seen {
				u.queryOrder = append(u.queryOrder, k)
			}
			u.query.Add(k, v)
		}
	}
	return u, nil
}

// pyUnquote decodes %XX escapes like Python's urllib.parse.unquote: an
// invalid escape is kept as is and '+' stays a plus sign.
func pyUnquote(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b = append(b, byte(v))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'f')
}

// rawUserInfo returns the part of raw between "://" and the '@' ending the
// credentials, or "".
func rawUserInfo(raw string) string {
	_, rest, _ := strings.Cut(raw, "://")
	i := strings.IndexAny(rest, "/?")
	if i < 0 {
		i = len(rest)
	}
	at := strings.Index(rest[:i], "@")
	if at < 0 {
		return ""
	}
	return rest[:at]
}

// ParseDatabaseURL translates an SQLAlchemy URL ([database]/connection) into
// a Go driver DSN:
//
//   - mysql://, mysql+pymysql://, mysql+mysqldb:// (and other mysql+
//     drivers, and mariadb://) give a go-sql-driver/mysql DSN with
//     parseTime=true, loc=UTC, the charset the URL asks for (utf8mb4
//     otherwise), a connect timeout (connect_timeout from the URL, or
//     DefaultConnectTimeout seconds) and unix_socket honoured;
//   - postgresql://, postgres://, postgresql+psycopg2:// (and other
//     postgresql+ drivers) give a pgx URL; libpq parameters of the query
//     (sslmode, connect_timeout, host...) are kept;
//   - sqlite:// (in memory), sqlite:///relative.db and sqlite:////abs.db give
//     a modernc.org/sqlite DSN with busy_timeout(5000), foreign_keys(1) and
//     BEGIN IMMEDIATE transactions.
//
// Query parameters a Go driver has no use for (SQLAlchemy's own, pymysql's
// plugin=...) are dropped. Passwords are URL-decoded. Errors never contain
// the password.
func ParseDatabaseURL(raw string) (DatabaseTarget, error) {
	raw = strings.TrimSpace(raw)
	red := redactURL(raw)
	if raw == "" {
		return DatabaseTarget{}, fmt.Errorf("%w: [database]/connection is not set", ErrDatabaseURL)
	}
	u, err := parseSQLAlchemyURL(raw)
	if err != nil {
		return DatabaseTarget{}, err
	}
	dialect, _, _ := strings.Cut(strings.ToLower(u.scheme), "+")
	switch dialect {
	case "mysql", "mariadb":
		return mysqlTarget(u, red)
	case "postgresql", "postgres":
		return postgresTarget(u, red)
	case "sqlite":
		return sqliteTarget(u, red)
	}
	return DatabaseTarget{}, dbErr(red, "unsupported dialect %q (want mysql, postgresql or sqlite)", u.scheme)
}

func timeoutSeconds(u *sqlaURL, red string) (int, error) {
	v := u.query.Get("connect_timeout")
	if v == "" {
		return DefaultConnectTimeout, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, dbErr(red, "connect_timeout %q is not a positive integer", v)
	}
	return n, nil
}

// mysqlCharset keeps charset names go-sql-driver passes to SET NAMES safe.
var mysqlCharset = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

func mysqlTarget(u *sqlaURL, red string) (DatabaseTarget, error) {
	if strings.Contains(u.database, "/") {
		return DatabaseTarget{}, dbErr(red, "database name %q contains '/'", u.database)
	}
	timeout, err := timeoutSeconds(u, red)
	if err != nil {
		return DatabaseTarget{}, err
	}
	charset := u.query.Get("charset")
	if charset == "" {
		charset = "utf8mb4"
	}
	if !mysqlCharset.MatchString(charset) {
		return DatabaseTarget{}, dbErr(red, "charset %q is not a charset name", charset)
	}
	var b strings.Builder
	if u.user != "" || u.hasPassword {
		b.WriteString(u.user)
		if u.hasPassword {
			b.WriteByte(':')
			b.WriteString(u.password)
		}
		b.WriteByte('@')
	}
	if sock := u.query.Get("unix_socket"); sock != "" {
		b.WriteString("unix(" + sock + ")")
	} else {
		host := u.host
		if host == "" {
			host = "localhost"
		}
		port := u.port
		if port == "" {
			port = "3306"
		}
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		b.WriteString("tcp(" + host + ":" + port + ")")
	}
	b.WriteByte('/')
	b.WriteString(u.database)
	params := url.Values{}
	params.Set("charset", charset)
	params.Set("parseTime", "true")
	params.Set("loc", "UTC")
	params.Set("timeout", strconv.Itoa(timeout)+"s")
	b.WriteByte('?')
	b.WriteString(params.Encode())
	return DatabaseTarget{Dialect: DialectMySQL, DSN: b.String(), Redacted: red}, nil
}

// libpqParams are the query parameters passed on to pgx; others are
// SQLAlchemy's or psycopg's and are dropped.
var libpqParams = map[string]bool{
	"sslmode": true, "sslrootcert": true, "sslcert": true, "sslkey": true, "sslpassword": true,
	"connect_timeout": true, "application_name": true, "target_session_attrs": true,
	"host": true, "port": true, "options": true, "search_path": true,
}

func postgresTarget(u *sqlaURL, red string) (DatabaseTarget, error) {
	timeout, err := timeoutSeconds(u, red)
	if err != nil {
		return DatabaseTarget{}, err
	}
	out := url.URL{Scheme: "postgres", Path: "/" + u.database}
	if u.user != "" || u.hasPassword {
		if u.hasPassword {
			out.User = url.UserPassword(u.user, u.password)
		} else {
			out.User = url.User(u.user)
		}
	}
	out.Host = u.host
	if strings.Contains(out.Host, ":") {
		out.Host = "[" + out.Host + "]"
	}
	if u.port != "" {
		out.Host += ":" + u.port
	}
	q := url.Values{}
	for _, k := range u.queryOrder {
		if libpqParams[k] {
			q[k] = u.query[k]
		}
	}
	q.Set("connect_timeout", strconv.Itoa(timeout))
	out.RawQuery = q.Encode()
	return DatabaseTarget{Dialect: DialectPostgres, DSN: out.String(), Redacted: red}, nil
}

// sqlitePragmas are appended to every SQLite DSN: wait for locks instead of
// failing at once, enforce foreign keys, and take the write lock at BEGIN
// (the db package relies on BEGIN IMMEDIATE instead of SELECT ... FOR UPDATE).
const sqlitePragmas = "_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_txlock=immediate"

func sqliteTarget(u *sqlaURL, red string) (DatabaseTarget, error) {
	if u.user != "" || u.hasPassword || u.host != "" || u.port != "" {
		return DatabaseTarget{}, dbErr(red, "an sqlite URL has no host or credentials (sqlite:///relative.db or sqlite:////absolute.db)")
	}
	path := u.database
	if path == "" || path == ":memory:" {
		path = ":memory:"
	}
	if strings.ContainsAny(path, "?#") || strings.HasPrefix(path, "file:") {
		return DatabaseTarget{}, dbErr(red, "sqlite path %q contains '?' or '#' or starts with file:", path)
	}
	return DatabaseTarget{Dialect: DialectSQLite, DSN: path + "?" + sqlitePragmas, Redacted: red}, nil
}

// DatabaseTarget translates [database]/connection, with
// [database]/connection_parameters appended to its query as oslo.db does at
// connect time.
func (o *Options) DatabaseTarget() (DatabaseTarget, error) {
	raw := strings.TrimSpace(o.Database.Connection)
	if p := strings.TrimSpace(o.Database.ConnectionParameters); p != "" && raw != "" {
		if strings.Contains(raw, "?") {
			raw += "&" + p
		} else {
			raw += "?" + p
		}
	}
	return ParseDatabaseURL(raw)
}
