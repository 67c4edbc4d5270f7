//! What a database is opened from: the dialect, the sqlx connection URL and
//! the pool settings, and the mapping of SQLAlchemy's pool options onto them.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use super::Error;

/// The three databases Magnum's schema runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// MariaDB or MySQL (Magnum's reference database).
    MySql,
    /// PostgreSQL.
    Postgres,
    /// SQLite (all-in-one, tests).
    Sqlite,
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 3] = [Dialect::MySql, Dialect::Postgres, Dialect::Sqlite];

    /// `mysql`, `postgres` or `sqlite`: the name of the migrations directory
    /// and of the dialect in messages.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::MySql => "mysql",
            Dialect::Postgres => "postgres",
            Dialect::Sqlite => "sqlite",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Dialect {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "mysql" => Ok(Dialect::MySql),
            "postgres" => Ok(Dialect::Postgres),
            "sqlite" => Ok(Dialect::Sqlite),
            _ => Err(Error::Config(format!(
                "unsupported database dialect {s:?} (want mysql, postgres or sqlite)"
            ))),
        }
    }
}

/// Where the database is and how the pool behaves. `Debug` hides the
/// password.
#[derive(Clone, PartialEq)]
pub struct DbTarget {
    /// The dialect; it must agree with the URL's scheme.
    pub dialect: Dialect,
    /// The sqlx connection URL: `mysql://user:password@host:3306/magnum`,
    /// `postgres://user:password@host:5432/magnum?sslmode=require`,
    /// `sqlite:///absolute/path.db`, `sqlite://relative.db` or
    /// `sqlite::memory:`. It contains the password: never log it, use
    /// [`DbTarget::redacted_url`].
    pub url: String,
    /// Most connections open at once (default 25). SQLite files always
    /// write through one connection; in-memory SQLite uses exactly one.
    pub max_connections: u32,
    /// Connections kept open even when idle (default 0).
    pub min_connections: u32,
    /// Idle connections above `min_connections` are closed after this
    /// (default 10 minutes; `None`: never).
    pub idle_timeout: Option<Duration>,
    /// Connections are recycled after this (default 1 hour: MariaDB closes
    /// idle connections after `wait_timeout`; `None`: never).
    pub max_lifetime: Option<Duration>,
    /// How long to wait for a connection, new or from the pool (default 10
    /// seconds); it also bounds the connection check of [`super::Db::open`].
    pub acquire_timeout: Duration,
    /// Attempts of one [`super::Db::in_tx`] call (default 5; oslo.db's
    /// `[database]/db_max_retries` + 1).
    pub max_attempts: u32,
    /// The first wait between attempts, doubled each time and jittered
    /// (default 20 ms).
    pub retry_backoff: Duration,
    /// How long SQLite waits for a lock held by another connection
    /// (default 5 seconds).
    pub sqlite_busy_timeout: Duration,
}

impl DbTarget {
    /// A target with the default pool settings.
    pub fn new(dialect: Dialect, url: impl Into<String>) -> DbTarget {
        DbTarget {
            dialect,
            url: url.into(),
            max_connections: 25,
            min_connections: 0,
            idle_timeout: Some(Duration::from_secs(600)),
            max_lifetime: Some(Duration::from_secs(3600)),
            acquire_timeout: Duration::from_secs(10),
            max_attempts: 5,
            retry_backoff: Duration::from_millis(20),
            sqlite_busy_timeout: Duration::from_secs(5),
        }
    }

    /// Applies [`pool_limits`] of `[database]/max_pool_size` and
    /// `max_overflow` (no change when the pool size is not set).
    pub fn with_pool_limits(mut self, limits: Option<PoolLimits>) -> DbTarget {
        if let Some(l) = limits {
            self.max_connections = l.max_connections;
            self.min_connections = l.min_connections;
        }
        self
    }

    /// The URL with its password replaced by `***`, safe for logs and
    /// messages.
    pub fn redacted_url(&self) -> String {
        if let Ok(mut u) = url::Url::parse(&self.url)
            && u.password().is_some_and(|p| !p.is_empty())
            && u.set_password(Some("***")).is_ok()
        {
            return u.to_string();
        }
        redact(&self.url, &self.url)
    }

    /// The password of the URL, decoded and as written, for redaction.
    pub(super) fn secrets(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Ok(u) = url::Url::parse(&self.url)
            && let Some(p) = u.password()
            && !p.is_empty()
        {
            out.push(p.to_string());
            if let Ok(d) = percent_encoding::percent_decode_str(p).decode_utf8()
                && d != p
            {
                out.push(d.into_owned());
            }
        }
        out
    }
}

impl fmt::Debug for DbTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DbTarget")
            .field("dialect", &self.dialect)
            .field("url", &self.redacted_url())
            .field("max_connections", &self.max_connections)
            .field("min_connections", &self.min_connections)
            .field("idle_timeout", &self.idle_timeout)
            .field("max_lifetime", &self.max_lifetime)
            .field("acquire_timeout", &self.acquire_timeout)
            .field("max_attempts", &self.max_attempts)
            .field("retry_backoff", &self.retry_backoff)
            .field("sqlite_busy_timeout", &self.sqlite_busy_timeout)
            .finish()
    }
}

/// Replaces the password of `url` wherever it appears in `msg` with `***`
/// (the URL's password as written and percent-decoded). A URL that does
/// not parse hides everything between `://` and its last `@`.
pub(super) fn redact(msg: &str, url: &str) -> String {
    let target = DbTarget::new(Dialect::Sqlite, url);
    let secrets = target.secrets();
    if secrets.is_empty() {
        if url::Url::parse(url).is_err()
            && let Some((_, rest)) = url.split_once("://")
            && let Some(at) = rest.rfind('@')
        {
            let hidden = &rest[..at];
            if !hidden.is_empty() {
                return msg.replace(hidden, "***");
            }
        }
        return msg.to_string();
    }
    let mut out = msg.to_string();
    for s in secrets {
        out = out.replace(&s, "***");
    }
    out
}

/// The pool of a target as SQLAlchemy's `QueuePool` options describe it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolLimits {
    /// `max_pool_size + max_overflow`.
    pub max_connections: u32,
    /// `max_pool_size`: the connections SQLAlchemy keeps once opened.
    pub min_connections: u32,
}

/// The most connections an unbounded overflow (`max_overflow = -1`) opens.
// Deviation: SQLAlchemy's max_overflow = -1 has no bound; sqlx reserves a
// slot per allowed connection when the pool is built, so the bound is 1024.
pub const UNBOUNDED_POOL: u32 = 1024;

/// Maps `[database]/max_pool_size` and `max_overflow` to pool limits with
/// SQLAlchemy's meaning: a pool of `max_pool_size` kept connections that may
/// open `max_overflow` more under load (`-1`: without bound) is at most
/// `max_pool_size + max_overflow` open connections, `max_pool_size` of them
/// kept. `None` (pool size unset or not positive) keeps the defaults of
/// [`DbTarget::new`].
///
/// sqlx opens the kept connections at start instead of on first use; once
/// warm, the pool is the same as SQLAlchemy's.
pub fn pool_limits(max_pool_size: i64, max_overflow: i64) -> Option<PoolLimits> {
    if max_pool_size <= 0 {
        return None;
    }
    let pool = u32::try_from(max_pool_size)
        .unwrap_or(UNBOUNDED_POOL)
        .min(UNBOUNDED_POOL);
    let max = if max_overflow < 0 {
        UNBOUNDED_POOL
    } else {
        u32::try_from(max_overflow)
            .unwrap_or(UNBOUNDED_POOL)
            .saturating_add(pool)
            .min(UNBOUNDED_POOL)
    };
    Some(PoolLimits {
        max_connections: max.max(pool),
        min_connections: pool,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Go `TestPoolLimits`: `[database]/max_pool_size` and `max_overflow`
    /// mean what they mean to SQLAlchemy's QueuePool.
    #[test]
    fn pool_limits_follow_sqlalchemy() {
        let limits = |max, min| {
            Some(PoolLimits {
                max_connections: max,
                min_connections: min,
            })
        };
        for (pool, overflow, want) in [
            (5, 50, limits(55, 5)), // Magnum's defaults
            (10, 0, limits(10, 10)),
            (5, -1, limits(UNBOUNDED_POOL, 5)),
            (0, 50, None), // unset: the defaults of DbTarget::new
            (-3, 50, None),
            (4000, 0, limits(UNBOUNDED_POOL, UNBOUNDED_POOL)),
        ] {
            assert_eq!(pool_limits(pool, overflow), want, "({pool}, {overflow})");
        }
        let t = DbTarget::new(Dialect::MySql, "mysql://u@h/d").with_pool_limits(pool_limits(5, 50));
        assert_eq!((t.max_connections, t.min_connections), (55, 5));
        let t = DbTarget::new(Dialect::MySql, "mysql://u@h/d").with_pool_limits(None);
        assert_eq!((t.max_connections, t.min_connections), (25, 0));
    }

    #[test]
    fn dialect_names_round_trip() {
        for d in Dialect::ALL {
            assert_eq!(d.name().parse::<Dialect>().ok(), Some(d));
        }
        let err = "oracle".parse::<Dialect>().err().map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("unsupported database dialect \"oracle\" (want mysql, postgres or sqlite)")
        );
    }

    #[test]
    fn passwords_are_redacted() {
        let t = DbTarget::new(
            Dialect::MySql,
            "mysql://magnum:s3cr%40t-pw@db.example:3306/magnum",
        );
        assert_eq!(
            t.redacted_url(),
            "mysql://magnum:***@db.example:3306/magnum"
        );
        let shown = format!("{t:?}");
        assert!(!shown.contains("s3cr"), "{shown}");
        assert_eq!(
            redact("login s3cr@t-pw and s3cr%40t-pw refused", &t.url),
            "login *** and *** refused"
        );
        assert_eq!(
            redact("nothing here", "sqlite:///var/lib/magnum.db"),
            "nothing here"
        );
        // A URL that does not parse hides its credentials as a whole.
        assert_eq!(
            redact("bad mysql://u:p w@h:99999/d", "mysql://u:p w@h:99999/d"),
            "bad mysql://***@h:99999/d"
        );
    }
}
