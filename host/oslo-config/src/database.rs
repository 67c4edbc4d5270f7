//! oslo.db's `[database]/connection`: an SQLAlchemy URL, translated into
//! the URL sqlx connects with.
//!
//! - `mysql://`, `mysql+pymysql://`, `mysql+mysqldb://` (any `+driver`) and
//!   `mariadb://` give a sqlx MySQL URL: host `localhost` and port 3306 when
//!   the URL has none, the charset the URL asks for (`utf8mb4` otherwise),
//!   pymysql's `unix_socket` as sqlx's `socket`, and the `ssl_ca`,
//!   `ssl_cert`, `ssl_key`, `ssl_mode` parameters as sqlx's;
//! - `postgresql://`, `postgres://`, `postgresql+psycopg2://` (any `+driver`)
//!   give a sqlx PostgreSQL URL keeping the libpq parameters sqlx knows
//!   (`sslmode`, `sslrootcert`, `sslcert`, `sslkey`, `application_name`,
//!   `options`, `host`, `port`) and `search_path` as a run-time option;
//! - `sqlite://` (in memory), `sqlite:///relative.db` and
//!   `sqlite:////absolute.db` give a sqlx SQLite URL that creates the file
//!   when missing, as pysqlite does.
//!
//! `connect_timeout` (seconds) becomes [`DatabaseUrl::connect_timeout`];
//! other parameters are dropped and listed by
//! [`DatabaseUrl::ignored_parameters`]. Passwords are URL-decoded like
//! SQLAlchemy does. Nothing here ever shows the password: errors and
//! `Display` use the URL with the password replaced by `***`.

use std::fmt;
use std::time::Duration;

use crate::Secret;
use crate::python::{self, PyInt};

/// The connect timeout when the URL does not set `connect_timeout`.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The database engines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// MySQL or MariaDB.
    MySql,
    /// PostgreSQL.
    Postgres,
    /// SQLite.
    Sqlite,
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dialect::MySql => "mysql",
            Dialect::Postgres => "postgres",
            Dialect::Sqlite => "sqlite",
        })
    }
}

/// A `[database]/connection` translated for sqlx. `Display` and `Debug`
/// show the original URL with its password masked.
#[derive(Clone, PartialEq, Eq)]
pub struct DatabaseUrl {
    dialect: Dialect,
    url: Secret,
    redacted: String,
    host: Option<String>,
    connect_timeout: Duration,
    sqlite_path: Option<String>,
    ignored: Vec<String>,
}

impl DatabaseUrl {
    /// Parses and translates an SQLAlchemy URL (surrounding whitespace is
    /// ignored).
    pub fn parse(raw: &str) -> Result<DatabaseUrl, DatabaseUrlError> {
        let raw = raw.trim();
        if raw.is_empty() {
            return Err(DatabaseUrlError {
                redacted: None,
                reason: "[database]/connection is not set".to_owned(),
            });
        }
        let redacted = redact(raw);
        let err = |reason: String| DatabaseUrlError {
            redacted: Some(redacted.clone()),
            reason,
        };
        let Some(m) = SqlaUrl::parse(raw) else {
            return Err(err(
                "not of the form dialect[+driver]://[user[:password]@]host[:port]/database"
                    .to_owned(),
            ));
        };
        // SQLAlchemy reads the port with Python's int().
        let port = match m.port.filter(|p| !p.is_empty()) {
            None => None,
            Some(p) => match python::int(p) {
                Some(PyInt::Small(n)) if (0..=65535).contains(&n) => u16::try_from(n).ok(),
                _ => {
                    return Err(err(format!(
                        "port {p:?} is not a number between 0 and 65535"
                    )));
                }
            },
        };
        let scheme = m.scheme.to_ascii_lowercase();
        let dialect = scheme.split('+').next().unwrap_or_default();
        let query = Query::parse(m.query.unwrap_or(""));
        let timeout = match query.get("connect_timeout") {
            None => DEFAULT_CONNECT_TIMEOUT,
            Some(v) => match v.parse::<u64>() {
                Ok(n) if n > 0 => Duration::from_secs(n),
                _ => {
                    return Err(err(format!(
                        "connect_timeout {v:?} is not a positive integer"
                    )));
                }
            },
        };
        let mut target = match dialect {
            "mysql" | "mariadb" => mysql(&m, port, &query).map_err(err)?,
            "postgresql" | "postgres" => postgres(&m, port, &query),
            "sqlite" => sqlite(&m, &query).map_err(err)?,
            _ => {
                return Err(err(format!(
                    "unsupported dialect {:?} (want mysql, postgresql or sqlite)",
                    m.scheme
                )));
            }
        };
        target.redacted = redacted;
        target.connect_timeout = timeout;
        Ok(target)
    }

    /// The engine.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The URL sqlx's `ConnectOptions::from_str` accepts. It contains the
    /// password.
    ///
    /// sqlx 0.9 on tokio does not strip the brackets of an IPv6 host taken
    /// from a URL: set [`DatabaseUrl::host`] on the parsed options too.
    pub fn sqlx_url(&self) -> &str {
        self.url.expose()
    }

    /// The host name or address, without brackets; `None` for SQLite and
    /// for a URL without host.
    pub fn host(&self) -> Option<&str> {
        self.host.as_deref()
    }

    /// The original URL with the password masked.
    pub fn redacted(&self) -> &str {
        &self.redacted
    }

    /// How long to wait for a connection: the URL's `connect_timeout`, or
    /// [`DEFAULT_CONNECT_TIMEOUT`].
    pub fn connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    /// For SQLite, the file (`:memory:` for an in-memory database).
    pub fn sqlite_path(&self) -> Option<&str> {
        self.sqlite_path.as_deref()
    }

    /// The names of the URL's query parameters that have no sqlx
    /// equivalent and were dropped (SQLAlchemy's own, drivers' tuning).
    pub fn ignored_parameters(&self) -> &[String] {
        &self.ignored
    }
}

impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted)
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DatabaseUrl")
            .field("dialect", &self.dialect)
            .field("url", &self.redacted)
            .field("connect_timeout", &self.connect_timeout)
            .finish_non_exhaustive()
    }
}

/// An invalid `[database]/connection`. The message names the URL with its
/// password masked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatabaseUrlError {
    redacted: Option<String>,
    reason: String,
}

impl fmt::Display for DatabaseUrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.redacted {
            Some(url) => write!(f, "invalid database connection URL {url}: {}", self.reason),
            None => write!(f, "invalid database connection URL: {}", self.reason),
        }
    }
}

impl DatabaseUrlError {
    /// The redacted URL and the reason.
    pub(crate) fn parts(&self) -> (Option<&str>, &str) {
        (self.redacted.as_deref(), &self.reason)
    }
}

impl std::error::Error for DatabaseUrlError {}

/// An SQLAlchemy URL split the way `sqlalchemy.engine.url._parse_url`'s
/// pattern does:
/// `name://[user[:password]@][host|[ipv6]][:port][/database][?query]`.
#[derive(Debug, PartialEq, Eq)]
struct SqlaUrl<'a> {
    scheme: &'a str,
    /// The raw (still %-encoded) user, when the URL has credentials.
    user: Option<&'a str>,
    /// The raw password and its byte range in the URL.
    password: Option<(&'a str, usize, usize)>,
    host: Option<&'a str>,
    ipv6: bool,
    port: Option<&'a str>,
    database: Option<&'a str>,
    query: Option<&'a str>,
}

impl<'a> SqlaUrl<'a> {
    /// Matches the whole of `raw`, resolving the pattern's backtracking by
    /// hand: the user is everything before the first `:` or `/`, and a
    /// password (after that `:`) runs to the next `@`; without such a
    /// password, the credentials end at the last `@` before that `:` or
    /// `/`.
    fn parse(raw: &'a str) -> Option<SqlaUrl<'a>> {
        let scheme_len = raw
            .bytes()
            .position(|b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'+'))
            .unwrap_or(raw.len());
        if scheme_len == 0 || !raw[scheme_len..].starts_with("://") {
            return None;
        }
        let scheme = &raw[..scheme_len];
        let start = scheme_len + 3;
        let rest = &raw[start..];
        let user_end = rest.find([':', '/']).unwrap_or(rest.len());
        let mut url = SqlaUrl {
            scheme,
            user: None,
            password: None,
            host: None,
            ipv6: false,
            port: None,
            database: None,
            query: None,
        };
        let mut s = rest;
        let with_password = rest[user_end..]
            .strip_prefix(':')
            .and_then(|after| after.find('@').map(|at| (user_end + 1, user_end + 1 + at)));
        if let Some((pw_start, at)) = with_password {
            url.user = Some(&rest[..user_end]);
            url.password = Some((&rest[pw_start..at], start + pw_start, start + at));
            s = &rest[at + 1..];
        } else if let Some(at) = rest[..user_end].rfind('@') {
            url.user = Some(&rest[..at]);
            s = &rest[at + 1..];
        }
        // host: "[ipv6]" when a closing bracket is followed by the end or
        // one of ":/?", else everything up to ':', '/' or '?'.
        let mut ipv6 = None;
        if let Some(inner) = s.strip_prefix('[') {
            let run = inner.find(['/', '?']).unwrap_or(inner.len());
            ipv6 = inner[..run].match_indices(']').rev().find_map(|(j, _)| {
                let after = &inner[j + 1..];
                (j > 0 && (after.is_empty() || after.starts_with([':', '/', '?']))).then_some(j)
            });
            if let Some(j) = ipv6 {
                url.host = Some(&inner[..j]);
                url.ipv6 = true;
                s = &inner[j + 1..];
            }
        }
        if ipv6.is_none() {
            let end = s.find([':', '/', '?']).unwrap_or(s.len());
            if end > 0 {
                url.host = Some(&s[..end]);
            }
            s = &s[end..];
        }
        if let Some(after) = s.strip_prefix(':') {
            let end = after.find(['/', '?']).unwrap_or(after.len());
            url.port = Some(&after[..end]);
            s = &after[end..];
        }
        if let Some(after) = s.strip_prefix('/') {
            let end = after.find('?').unwrap_or(after.len());
            url.database = Some(&after[..end]);
            s = &after[end..];
        }
        if let Some(after) = s.strip_prefix('?') {
            url.query = Some(after);
        }
        Some(url)
    }

    /// The user, %-decoded.
    fn user(&self) -> String {
        self.user.map(unquote).unwrap_or_default()
    }

    /// The password, %-decoded.
    fn password(&self) -> Option<String> {
        self.password.map(|(p, _, _)| unquote(p))
    }

    fn has_credentials(&self) -> bool {
        self.user.is_some_and(|u| !u.is_empty()) || self.password.is_some()
    }
}

/// The raw password of an SQLAlchemy URL, as the pattern splits it (for the
/// fuzz target's leak check).
pub(crate) fn raw_password(raw: &str) -> Option<&str> {
    SqlaUrl::parse(raw).and_then(|m| m.password.map(|(p, _, _)| p))
}

/// Masks the password of an SQLAlchemy URL, so that even a URL we refuse can
/// be named in an error. The mask runs from the password's start to the
/// last `@` of the URL: SQLAlchemy ends the password at the first `@`, but
/// what an operator put before a later `@` is likely secret too.
fn redact(raw: &str) -> String {
    if let Some(url) = SqlaUrl::parse(raw) {
        let Some((_, start, end)) = url.password else {
            return raw.to_owned();
        };
        let end = raw.rfind('@').filter(|&at| at > end).unwrap_or(end);
        return format!("{}***{}", &raw[..start], &raw[end..]);
    }
    match raw.split_once("://") {
        None if raw.contains('@') => "<unparsable URL>".to_owned(),
        None => raw.to_owned(),
        Some((scheme, rest)) => match rest.rfind('@') {
            Some(at) => format!("{scheme}://***{}", &rest[at..]),
            None => raw.to_owned(),
        },
    }
}

/// `%XX` decoding like Python's `urllib.parse.unquote`: an invalid escape
/// is kept as is, `+` stays a plus sign, invalid UTF-8 becomes U+FFFD.
fn unquote(s: &str) -> String {
    if !s.contains('%') {
        return s.to_owned();
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() && hex(b[i + 1]).is_some() && hex(b[i + 2]).is_some() {
            let (hi, lo) = (hex(b[i + 1]).unwrap_or(0), hex(b[i + 2]).unwrap_or(0));
            out.push(hi * 16 + lo);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(c: u8) -> Option<u8> {
    char::from(c).to_digit(16).map(|d| d as u8)
}

/// `%`-encodes everything but RFC 3986's unreserved characters.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A query string parsed like Python's `urllib.parse.parse_qsl` (as
/// SQLAlchemy calls it): pairs split on `&`, `+` is a space, `%XX` decoded,
/// pairs with an empty value dropped.
struct Query(Vec<(String, String)>);

impl Query {
    fn parse(q: &str) -> Query {
        let decode = |s: &str| unquote(&s.replace('+', " "));
        let pairs = q
            .split('&')
            .filter(|p| !p.is_empty())
            .filter_map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                let v = decode(v);
                (!v.is_empty()).then(|| (decode(k), v))
            })
            .collect();
        Query(pairs)
    }

    /// The first value of a parameter.
    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_str())
    }
}

/// Appends `name=value` pairs, %-encoded, as `?a=b&c=d`.
fn push_query(url: &mut String, pairs: &[(String, String)]) {
    for (i, (k, v)) in pairs.iter().enumerate() {
        url.push(if i == 0 { '?' } else { '&' });
        url.push_str(&quote(k));
        url.push('=');
        url.push_str(&quote(v));
    }
}

/// Drops duplicates, keeping the first of each name, in order.
fn ignored(query: &Query, used: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in query.names() {
        if !used.contains(&name) && !out.iter().any(|n| n == name) {
            out.push(name.to_owned());
        }
    }
    out
}

fn empty_target(dialect: Dialect) -> DatabaseUrl {
    DatabaseUrl {
        dialect,
        url: Secret::default(),
        redacted: String::new(),
        host: None,
        connect_timeout: DEFAULT_CONNECT_TIMEOUT,
        sqlite_path: None,
        ignored: Vec::new(),
    }
}

fn credentials(m: &SqlaUrl<'_>) -> String {
    if !m.has_credentials() {
        return String::new();
    }
    let mut out = quote(&m.user());
    if let Some(pw) = m.password() {
        out.push(':');
        out.push_str(&quote(&pw));
    }
    out.push('@');
    out
}

fn host_for_url(host: &str, ipv6: bool) -> String {
    if ipv6 || host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_owned()
    }
}

fn mysql(m: &SqlaUrl<'_>, port: Option<u16>, query: &Query) -> Result<DatabaseUrl, String> {
    let database = m.database.unwrap_or("");
    if database.contains('/') {
        return Err(format!("database name {database:?} contains '/'"));
    }
    let charset = query.get("charset").unwrap_or("utf8mb4");
    if charset.is_empty()
        || !charset
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return Err(format!("charset {charset:?} is not a charset name"));
    }
    let host = m.host.unwrap_or("localhost");
    let mut url = format!(
        "mysql://{}{}:{}/{}",
        credentials(m),
        host_for_url(host, m.ipv6),
        port.unwrap_or(3306),
        quote(database)
    );
    let mut params = vec![("charset".to_owned(), charset.to_owned())];
    // pymysql's and mysqlclient's names for what sqlx calls otherwise.
    let renamed = [
        ("unix_socket", "socket"),
        ("ssl_ca", "ssl-ca"),
        ("ssl_cert", "ssl-cert"),
        ("ssl_key", "ssl-key"),
    ];
    for (theirs, ours) in renamed {
        if let Some(v) = query.get(theirs) {
            params.push((ours.to_owned(), v.to_owned()));
        }
    }
    match query.get("ssl_mode") {
        Some(mode) => {
            let known = [
                "disabled",
                "preferred",
                "required",
                "verify_ca",
                "verify_identity",
            ];
            if !known.contains(&mode.to_ascii_lowercase().as_str()) {
                return Err(format!(
                    "ssl_mode {mode:?} is not one of DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY"
                ));
            }
            params.push(("ssl-mode".to_owned(), mode.to_ascii_uppercase()));
        }
        // pymysql verifies the server's certificate once it is given a CA.
        None if query.get("ssl_ca").is_some() => {
            params.push(("ssl-mode".to_owned(), "VERIFY_CA".to_owned()))
        }
        None => {}
    }
    push_query(&mut url, &params);
    let mut target = empty_target(Dialect::MySql);
    target.url = Secret::new(url);
    target.host = Some(host.to_owned());
    target.ignored = ignored(
        query,
        &[
            "charset",
            "unix_socket",
            "ssl_ca",
            "ssl_cert",
            "ssl_key",
            "ssl_mode",
            "connect_timeout",
        ],
    );
    Ok(target)
}

/// The libpq parameters sqlx understands, passed on as they are.
const LIBPQ_PARAMS: [&str; 8] = [
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "application_name",
    "options",
    "host",
    "port",
];

fn postgres(m: &SqlaUrl<'_>, port: Option<u16>, query: &Query) -> DatabaseUrl {
    let database = m.database.unwrap_or("");
    let mut params: Vec<(String, String)> = Vec::new();
    let mut url = match m.host {
        Some(host) => {
            let mut url = format!(
                "postgres://{}{}",
                credentials(m),
                host_for_url(host, m.ipv6)
            );
            if let Some(port) = port {
                url.push_str(&format!(":{port}"));
            }
            url
        }
        None => {
            // A URL without host cannot carry credentials ("empty host"):
            // sqlx reads them from the query too.
            if m.has_credentials() {
                params.push(("user".to_owned(), m.user()));
                if let Some(pw) = m.password() {
                    params.push(("password".to_owned(), pw));
                }
            }
            if let Some(port) = port {
                params.push(("port".to_owned(), port.to_string()));
            }
            "postgres://".to_owned()
        }
    };
    url.push('/');
    url.push_str(&quote(database));
    let mut used: Vec<&str> = vec!["connect_timeout", "search_path"];
    for (k, v) in &query.0 {
        if LIBPQ_PARAMS.contains(&k.as_str()) && !params.iter().any(|(p, _)| p == k) {
            params.push((k.clone(), v.clone()));
        }
    }
    used.extend(LIBPQ_PARAMS);
    if let Some(path) = query.get("search_path") {
        params.push(("options[search_path]".to_owned(), path.to_owned()));
    }
    push_query(&mut url, &params);
    let mut target = empty_target(Dialect::Postgres);
    target.url = Secret::new(url);
    target.host = m.host.map(str::to_owned);
    target.ignored = ignored(query, &used);
    target
}

fn sqlite(m: &SqlaUrl<'_>, query: &Query) -> Result<DatabaseUrl, String> {
    if m.has_credentials() || m.host.is_some() || m.port.is_some() {
        return Err("an sqlite URL has no host or credentials (sqlite:///relative.db or sqlite:////absolute.db)"
            .to_owned());
    }
    let path = match m.database.unwrap_or("") {
        "" | ":memory:" => ":memory:",
        p => p,
    };
    if path.contains(['?', '#']) || path.starts_with("file:") {
        return Err(format!(
            "sqlite path {path:?} contains '?' or '#' or starts with file:"
        ));
    }
    let url = if path == ":memory:" {
        "sqlite::memory:".to_owned()
    } else {
        // sqlx %-decodes the file name.
        format!("sqlite://{}?mode=rwc", path.replace('%', "%25"))
    };
    let mut target = empty_target(Dialect::Sqlite);
    target.url = Secret::new(url);
    target.sqlite_path = Some(path.to_owned());
    target.ignored = ignored(query, &["connect_timeout"]);
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Port of TestParseDatabaseURL (the Go DSNs become sqlx URLs).
    #[test]
    fn translations() {
        let cases: &[(&str, &str, Dialect, &str, &str, u64)] = &[
            (
                "pymysql with charset utf8 keeps the charset",
                "mysql+pymysql://magnum:s3cret@db.example:3307/magnum?charset=utf8",
                Dialect::MySql,
                "mysql://magnum:s3cret@db.example:3307/magnum?charset=utf8",
                "mysql+pymysql://magnum:***@db.example:3307/magnum?charset=utf8",
                10,
            ),
            (
                "plain mysql defaults to utf8mb4 and port 3306",
                "mysql://magnum:pw@db/magnum",
                Dialect::MySql,
                "mysql://magnum:pw@db:3306/magnum?charset=utf8mb4",
                "mysql://magnum:***@db/magnum",
                10,
            ),
            (
                "mysqldb, encoded password, pymysql plugin dropped, connect_timeout kept",
                "mysql+mysqldb://magnum:p%40ss%3Aw%2Frd@10.0.0.5/magnum?plugin=dbcounter&connect_timeout=3",
                Dialect::MySql,
                "mysql://magnum:p%40ss%3Aw%2Frd@10.0.0.5:3306/magnum?charset=utf8mb4",
                "mysql+mysqldb://magnum:***@10.0.0.5/magnum?plugin=dbcounter&connect_timeout=3",
                3,
            ),
            (
                "unix socket",
                "mysql+pymysql://magnum:pw@/magnum?unix_socket=/var/run/mysqld/mysqld.sock",
                Dialect::MySql,
                "mysql://magnum:pw@localhost:3306/magnum?charset=utf8mb4&socket=%2Fvar%2Frun%2Fmysqld%2Fmysqld.sock",
                "mysql+pymysql://magnum:***@/magnum?unix_socket=/var/run/mysqld/mysqld.sock",
                10,
            ),
            (
                "IPv6 host and no password",
                "mysql://root@[::1]:3306/magnum",
                Dialect::MySql,
                "mysql://root@[::1]:3306/magnum?charset=utf8mb4",
                "mysql://root@[::1]:3306/magnum",
                10,
            ),
            (
                "postgresql",
                "postgresql://magnum:pw@pg.example:5433/magnum",
                Dialect::Postgres,
                "postgres://magnum:pw@pg.example:5433/magnum",
                "postgresql://magnum:***@pg.example:5433/magnum",
                10,
            ),
            (
                "psycopg2 keeps libpq parameters and drops the others",
                "postgresql+psycopg2://magnum:p%2Fw%40@pg/magnum?sslmode=require&client_encoding=utf8",
                Dialect::Postgres,
                "postgres://magnum:p%2Fw%40@pg/magnum?sslmode=require",
                "postgresql+psycopg2://magnum:***@pg/magnum?sslmode=require&client_encoding=utf8",
                10,
            ),
            (
                "sqlite in memory",
                "sqlite://",
                Dialect::Sqlite,
                "sqlite::memory:",
                "sqlite://",
                10,
            ),
            (
                "sqlite relative path",
                "sqlite:///magnum.sqlite",
                Dialect::Sqlite,
                "sqlite://magnum.sqlite?mode=rwc",
                "sqlite:///magnum.sqlite",
                10,
            ),
            (
                "sqlite absolute path",
                "sqlite:////var/lib/magnum/magnum.sqlite",
                Dialect::Sqlite,
                "sqlite:///var/lib/magnum/magnum.sqlite?mode=rwc",
                "sqlite:////var/lib/magnum/magnum.sqlite",
                10,
            ),
            (
                "surrounding whitespace",
                "  sqlite:///:memory:\n",
                Dialect::Sqlite,
                "sqlite::memory:",
                "sqlite:///:memory:",
                10,
            ),
        ];
        for &(name, raw, dialect, url, redacted, timeout) in cases {
            let got = DatabaseUrl::parse(raw).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(got.dialect(), dialect, "{name}");
            assert_eq!(got.sqlx_url(), url, "{name}");
            assert_eq!(got.redacted(), redacted, "{name}");
            assert_eq!(got.to_string(), redacted, "{name}");
            assert_eq!(
                got.connect_timeout(),
                Duration::from_secs(timeout),
                "{name}"
            );
        }
    }

    #[test]
    fn details() {
        let u =
            DatabaseUrl::parse("mysql+mysqldb://m:p@h/db?plugin=dbcounter&read_timeout=5&plugin=x")
                .expect("url");
        assert_eq!(u.ignored_parameters(), ["plugin", "read_timeout"]);
        assert_eq!(u.host(), Some("h"));
        assert!(!format!("{u:?}").contains(":p@"), "{u:?}");

        let u = DatabaseUrl::parse("mysql://root@[::1]/magnum").expect("url");
        assert_eq!(u.host(), Some("::1"));

        let u = DatabaseUrl::parse("mysql://u:p@h/db?ssl_ca=/ca.pem").expect("url");
        assert_eq!(
            u.sqlx_url(),
            "mysql://u:p@h:3306/db?charset=utf8mb4&ssl-ca=%2Fca.pem&ssl-mode=VERIFY_CA"
        );
        let u = DatabaseUrl::parse("mysql://u:p@h/db?ssl_mode=required").expect("url");
        assert_eq!(
            u.sqlx_url(),
            "mysql://u:p@h:3306/db?charset=utf8mb4&ssl-mode=REQUIRED"
        );
        assert!(DatabaseUrl::parse("mysql://u:p@h/db?ssl_mode=sometimes").is_err());

        let u = DatabaseUrl::parse("postgresql://u:p@/magnum?host=/var/run/postgresql&search_path=m&target_session_attrs=any")
            .expect("url");
        assert_eq!(
            u.sqlx_url(),
            "postgres:///magnum?user=u&password=p&host=%2Fvar%2Frun%2Fpostgresql&options%5Bsearch_path%5D=m"
        );
        assert_eq!(u.ignored_parameters(), ["target_session_attrs"]);
        assert_eq!(u.host(), None);
        let u = DatabaseUrl::parse("postgresql://[fe80::1]:5432/m").expect("url");
        assert_eq!(u.sqlx_url(), "postgres://[fe80::1]:5432/m");

        let u = DatabaseUrl::parse("sqlite:////srv/a%20b.db?timeout=3").expect("url");
        assert_eq!(u.sqlx_url(), "sqlite:///srv/a%2520b.db?mode=rwc");
        assert_eq!(u.sqlite_path(), Some("/srv/a%20b.db"));
        assert_eq!(u.ignored_parameters(), ["timeout"]);

        // parse_qsl: '+' is a space, empty values are dropped.
        let u = DatabaseUrl::parse("mysql://u@h/db?charset=&connect_timeout=+4")
            .expect_err("timeout ' 4'");
        assert!(u.to_string().contains("connect_timeout \" 4\""), "{u}");
    }

    // Port of TestParseDatabaseURLErrors.
    #[test]
    fn errors() {
        let cases = [
            ("empty", "", "[database]/connection is not set"),
            ("no scheme", "magnum:topsecret@db/magnum", "not of the form"),
            (
                "unsupported dialect",
                "oracle://u:topsecret@h/db",
                "unsupported dialect \"oracle\"",
            ),
            (
                "bad port",
                "mysql://u:topsecret@h:99999/db",
                "port \"99999\"",
            ),
            (
                "sqlite with a host",
                "sqlite://u:topsecret@host/x.db",
                "no host or credentials",
            ),
            (
                "bad connect_timeout",
                "postgresql://u:topsecret@h/db?connect_timeout=soon",
                "connect_timeout \"soon\"",
            ),
            (
                "odd charset",
                "mysql://u:topsecret@h/db?charset=utf8;drop",
                "charset \"utf8;drop\"",
            ),
        ];
        for (name, raw, want) in cases {
            let err = DatabaseUrl::parse(raw).expect_err(name).to_string();
            assert!(
                err.contains(want),
                "{name}: {err:?} does not contain {want:?}"
            );
            assert!(
                !err.contains("topsecret"),
                "{name}: {err:?} leaks the password"
            );
            assert!(
                err.starts_with("invalid database connection URL"),
                "{name}: {err}"
            );
        }
    }

    // Port of TestRedactURL.
    #[test]
    fn redaction() {
        let cases = [
            ("mysql://u:pw@h/db", "mysql://u:***@h/db"),
            ("mysql://u@h/db", "mysql://u@h/db"),
            ("mysql://u:p@w@h/db", "mysql://u:***@h/db"),
            ("mysql://u:pa/ss@h/db", "mysql://u:***@h/db"),
            ("mysql://h/db?x=a@b", "mysql://h/db?x=a@b"),
            ("mysql://u:pw@h/db?x=a@b", "mysql://u:***@b"),
            ("0://?@:0000@", "0://?@:***@"),
            ("sqlite://", "sqlite://"),
            ("u:pw@h", "<unparsable URL>"),
            ("x-y://u:pw@h", "x-y://***@h"),
        ];
        for (raw, want) in cases {
            assert_eq!(redact(raw), want, "{raw}");
        }
    }

    #[test]
    fn pattern_resolution() {
        let u = SqlaUrl::parse("mysql://a@b@c/db").expect("match");
        assert_eq!(
            (u.user, u.host, u.database),
            (Some("a@b"), Some("c"), Some("db"))
        );
        let u = SqlaUrl::parse("mysql://[::1]x/db").expect("match");
        assert_eq!((u.host, u.port, u.ipv6), (Some("["), Some(":1]x"), false));
        let u = SqlaUrl::parse("mysql://u:p@[::1]:3306/db?a=b").expect("match");
        assert_eq!(
            (u.user, u.password.map(|p| p.0), u.host, u.port, u.query),
            (Some("u"), Some("p"), Some("::1"), Some("3306"), Some("a=b"))
        );
        let u = SqlaUrl::parse("sqlite://").expect("match");
        assert_eq!((u.host, u.database), (None, None));
        assert!(SqlaUrl::parse("my sql://h").is_none());
        assert!(SqlaUrl::parse("://h").is_none());
        assert_eq!(unquote("a%41%zz%4"), "aA%zz%4");
        assert_eq!(unquote("%ff"), "\u{fffd}");
        assert_eq!(quote("p@ss:w/rd é"), "p%40ss%3Aw%2Frd%20%C3%A9");
    }
}

/// The hand-written matcher against the pattern it implements
/// (`sqlalchemy.engine.url._parse_url`'s, anchored, ASCII `\w`), run by
/// Python's `re` (`OPENKEEL_TEST_PYTHON`) on random URL-like strings.
#[cfg(test)]
mod oracle {

    use super::*;

    const PATTERN: &str = r"(?s)([0-9A-Za-z_+]+)://(?:([^:/]*)(?::([^@]*))?@)?(?:(?:\[([^/?]+)\]|([^/:?]+))?(?::([^/?]*))?)?(?:/([^?]*))?(?:\?(.*))?";

    const SCRIPT: &str = r#"
import json, re, sys
spec = json.load(sys.stdin)
p = re.compile(spec["pattern"])
out = []
for s in spec["inputs"]:
    m = p.fullmatch(s)
    if m is None:
        out.append(None)
    else:
        out.append([m.group(i) for i in range(1, 9)] + [m.start(3)])
json.dump(out, sys.stdout)
"#;

    const PIECES: &[&str] = &[
        "mysql", "+pymysql", "://", "u", ":", "pw", "@", "/", "?", "[", "]", "::1", "h", "3306",
        "db", "=", "&", "%40", " ", "\n", "é", "x", "0", "sqlite",
    ];

    #[test]
    fn python_re_agrees() {
        let Some(python) = test_support::oracle::python() else {
            return;
        };
        let mut state: u64 = 7;
        let mut below = |n: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) % n as u64) as usize
        };
        let mut inputs: Vec<String> = Vec::new();
        for _ in 0..3000 {
            let mut s = String::new();
            if below(4) > 0 {
                s.push_str(
                    [
                        "mysql://",
                        "postgresql+psycopg2://",
                        "sqlite://",
                        "a_b+c://",
                    ][below(4)],
                );
            }
            for _ in 0..below(10) {
                s.push_str(PIECES[below(PIECES.len())]);
            }
            inputs.push(s);
        }
        let input = serde_json::json!({ "pattern": PATTERN, "inputs": inputs }).to_string();
        let out =
            test_support::oracle::run(&python, &["-c".as_ref(), SCRIPT.as_ref()], input.as_bytes());
        let results: Vec<Option<Vec<serde_json::Value>>> =
            serde_json::from_slice(&out).unwrap_or_else(|e| panic!("python output: {e}"));
        let mut failures = Vec::new();
        for (raw, want) in inputs.iter().zip(results) {
            let got = SqlaUrl::parse(raw).map(|m| {
                let s =
                    |v: Option<&str>| v.map_or(serde_json::Value::Null, |v| serde_json::json!(v));
                // Python's start() counts characters.
                let pw_start = m.password.map_or(serde_json::json!(-1), |(_, start, _)| {
                    serde_json::json!(raw[..start].chars().count())
                });
                vec![
                    serde_json::json!(m.scheme),
                    s(m.user),
                    s(m.password.map(|p| p.0)),
                    s(m.host.filter(|_| m.ipv6)),
                    s(m.host.filter(|_| !m.ipv6)),
                    s(m.port),
                    s(m.database),
                    s(m.query),
                    pw_start,
                ]
            });
            if got != want {
                failures.push(format!("{raw:?}: python {want:?}, ours {got:?}"));
            }
        }
        failures.truncate(10);
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
