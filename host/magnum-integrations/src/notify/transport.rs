//! oslo.messaging's transport URL,
//! `transport://user:pass@host:port[,userN:passN@hostN:portN]/virtual_host?query`,
//! parsed as `TransportURL.parse` does, and the broker addresses the rabbit
//! driver derives from it.

use std::fmt;

use oslo_config::Secret;
use percent_encoding::percent_decode_str;

/// A parsed transport URL. `Debug` never shows a password.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransportUrl {
    /// The scheme: the messaging driver (`rabbit`, `kombu`, `kafka`…).
    pub transport: String,
    /// The path after its `/`, percent-decoded; `None` without a path.
    pub virtual_host: Option<String>,
    /// The hosts, in the order written.
    pub hosts: Vec<TransportHost>,
}

/// One host of a transport URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransportHost {
    /// The host name or address (an IPv6 address without brackets).
    pub hostname: String,
    /// The port, when written.
    pub port: Option<u16>,
    /// The user name, percent-decoded.
    pub username: Option<String>,
    /// The password, percent-decoded.
    pub password: Option<Secret>,
}

/// A transport URL oslo.messaging refuses. The message never contains the
/// URL (it may hold a password).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransportUrlError(pub String);

impl fmt::Display for TransportUrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid transport URL: {}", self.0)
    }
}

impl std::error::Error for TransportUrlError {}

/// Where and how to connect to one broker, as the rabbit driver builds it
/// for kombu from one host of the URL.
#[derive(Clone, PartialEq, Eq)]
pub struct Broker {
    /// The host to connect to.
    pub host: String,
    /// The port (5672 when the URL has none, even with TLS, as oslo
    /// writes it).
    pub port: u16,
    /// The user (kombu's `guest` when empty).
    pub username: String,
    /// The password (kombu's `guest` when empty).
    pub password: Secret,
    /// The virtual host (`/` when empty).
    pub vhost: String,
}

impl fmt::Debug for Broker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Broker")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("username", &self.username)
            .field("password", &self.password)
            .field("vhost", &self.vhost)
            .finish()
    }
}

impl fmt::Display for Broker {
    /// `host:port` (what logs may show).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

impl TransportUrl {
    /// Parses `url` as oslo.messaging's `TransportURL.parse`.
    pub fn parse(url: &str) -> Result<TransportUrl, TransportUrlError> {
        // urllib.parse.urlparse: the scheme runs to the first ':' when it is
        // made of letters, digits, '+', '-', '.' and starts with a letter.
        let (scheme, rest) = match url.split_once(':') {
            Some((s, rest))
                if s.starts_with(|c: char| c.is_ascii_alphabetic())
                    && s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) =>
            {
                (s.to_ascii_lowercase(), rest)
            }
            _ => return Err(TransportUrlError("no scheme specified".into())),
        };
        // The fragment and the query are not the driver's business here.
        let rest = rest.split('#').next().unwrap_or("");
        let rest = rest.split('?').next().unwrap_or("");
        let (netloc, path) = match rest.strip_prefix("//") {
            Some(after) => match after.find('/') {
                Some(i) => (&after[..i], &after[i..]),
                None => (after, ""),
            },
            None => ("", rest),
        };
        let virtual_host = path
            .strip_prefix('/')
            .map(|p| percent_decode_str(p).decode_utf8_lossy().into_owned());

        let mut hosts = Vec::new();
        for host in netloc.split(',') {
            if host.is_empty() {
                continue;
            }
            let (userinfo, hostport) = match host.rsplit_once('@') {
                Some((u, h)) => (Some(u), h),
                None => (None, host),
            };
            let (username, password) = match userinfo {
                None => (None, None),
                Some(u) => match u.split_once(':') {
                    Some((user, pass)) => (Some(decode(user)), Some(Secret::new(decode(pass)))),
                    None => (Some(decode(u)), None),
                },
            };
            let (hostname, port) = parse_host_port(hostport)?;
            hosts.push(TransportHost {
                hostname,
                port,
                username,
                password,
            });
        }
        Ok(TransportUrl {
            transport: scheme,
            virtual_host,
            hosts,
        })
    }

    /// Whether the rabbit driver serves this URL (`rabbit://`, `kombu://`).
    pub fn is_rabbit(&self) -> bool {
        matches!(self.transport.as_str(), "rabbit" | "kombu")
    }

    /// The brokers to try, in order, as the rabbit driver derives them: a
    /// URL without hosts means `guest:guest@localhost:5672`.
    pub fn brokers(&self) -> Vec<Broker> {
        let vhost = match self.virtual_host.as_deref() {
            None | Some("") => "/".to_owned(),
            Some(v) => v.to_owned(),
        };
        let guest = |s: Option<&str>| match s {
            None | Some("") => "guest".to_owned(),
            Some(s) => s.to_owned(),
        };
        if self.hosts.is_empty() {
            return vec![Broker {
                host: "localhost".into(),
                port: 5672,
                username: "guest".into(),
                password: Secret::new("guest"),
                vhost,
            }];
        }
        self.hosts
            .iter()
            .map(|h| Broker {
                host: if h.hostname.is_empty() {
                    "localhost".into()
                } else {
                    h.hostname.clone()
                },
                port: h.port.unwrap_or(5672),
                username: guest(h.username.as_deref()),
                password: Secret::new(guest(h.password.as_ref().map(Secret::expose))),
                vhost: vhost.clone(),
            })
            .collect()
    }
}

fn decode(s: &str) -> String {
    percent_decode_str(s).decode_utf8_lossy().into_owned()
}

/// oslo.utils' `parse_host_port`: `host`, `host:port`, `[v6]`, `[v6]:port`;
/// an unbracketed address with several colons is an IPv6 address alone.
fn parse_host_port(s: &str) -> Result<(String, Option<u16>), TransportUrlError> {
    let bad_port = || TransportUrlError("a host's port is not a number from 0 to 65535".into());
    if let Some(rest) = s.strip_prefix('[') {
        let Some((host, after)) = rest.split_once(']') else {
            return Err(TransportUrlError("an IPv6 address lacks its ']'".into()));
        };
        let port = match after.strip_prefix(':') {
            Some(p) if !p.is_empty() => Some(p.parse().map_err(|_| bad_port())?),
            _ => None,
        };
        return Ok((host.to_owned(), port));
    }
    match s.matches(':').count() {
        0 => Ok((s.to_owned(), None)),
        1 => {
            let (host, port) = s.split_once(':').unwrap_or((s, ""));
            let port = if port.is_empty() {
                None
            } else {
                Some(port.parse().map_err(|_| bad_port())?)
            };
            Ok((host.to_owned(), port))
        }
        _ => Ok((s.to_owned(), None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(h: &str, port: Option<u16>, user: Option<&str>, pass: Option<&str>) -> TransportHost {
        TransportHost {
            hostname: h.into(),
            port,
            username: user.map(str::to_owned),
            password: pass.map(Secret::new),
        }
    }

    #[test]
    fn one_host_with_credentials_and_vhost() {
        let u = TransportUrl::parse("rabbit://magnum:s3cr%40t@rabbit1:5672/openstack").unwrap();
        assert_eq!(u.transport, "rabbit");
        assert_eq!(u.virtual_host.as_deref(), Some("openstack"));
        assert_eq!(
            u.hosts,
            [host("rabbit1", Some(5672), Some("magnum"), Some("s3cr@t"))]
        );
        let b = u.brokers();
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].to_string(), "rabbit1:5672");
        assert_eq!(b[0].password.expose(), "s3cr@t");
        assert_eq!(b[0].vhost, "openstack");
    }

    #[test]
    fn several_hosts_keep_their_order_and_credentials() {
        let u = TransportUrl::parse("rabbit://a:pa@h1:5673,b:pb@h2,[::1]:5674,h4/").unwrap();
        assert_eq!(
            u.hosts,
            [
                host("h1", Some(5673), Some("a"), Some("pa")),
                host("h2", None, Some("b"), Some("pb")),
                host("::1", Some(5674), None, None),
                host("h4", None, None, None),
            ]
        );
        let b = u.brokers();
        assert_eq!(
            b.iter().map(ToString::to_string).collect::<Vec<_>>(),
            ["h1:5673", "h2:5672", "[::1]:5674", "h4:5672"]
        );
        // A host without credentials gets kombu's guest; "/" and "" are the
        // default vhost.
        assert_eq!(b[3].username, "guest");
        assert_eq!(b[3].password.expose(), "guest");
        assert_eq!(b[0].vhost, "/");
    }

    #[test]
    fn the_defaults_url_is_guest_on_localhost() {
        let u = TransportUrl::parse("rabbit://").unwrap();
        assert!(u.hosts.is_empty());
        assert_eq!(u.virtual_host, None);
        let b = u.brokers();
        assert_eq!(b[0].to_string(), "localhost:5672");
        assert_eq!(b[0].username, "guest");
        assert_eq!(b[0].vhost, "/");
    }

    #[test]
    fn a_slash_vhost_is_written_as_two_slashes_or_escaped() {
        for url in ["rabbit://u:p@h//", "rabbit://u:p@h/%2F"] {
            let u = TransportUrl::parse(url).unwrap();
            assert_eq!(u.virtual_host.as_deref(), Some("/"), "{url}");
            assert_eq!(u.brokers()[0].vhost, "/");
        }
    }

    #[test]
    fn query_and_scheme_case() {
        let u = TransportUrl::parse("RABBIT://u:p@h:1/v?ssl=1").unwrap();
        assert_eq!(u.transport, "rabbit");
        assert!(u.is_rabbit());
        assert_eq!(u.virtual_host.as_deref(), Some("v"));
        assert!(!TransportUrl::parse("kafka://h:9092").unwrap().is_rabbit());
        assert!(TransportUrl::parse("kombu://h").unwrap().is_rabbit());
    }

    #[test]
    fn user_without_password_and_password_with_colons() {
        let u = TransportUrl::parse("rabbit://only@h,u:a:b@i").unwrap();
        assert_eq!(u.hosts[0], host("h", None, Some("only"), None));
        assert_eq!(u.hosts[1], host("i", None, Some("u"), Some("a:b")));
        // A user without a password: the password is kombu's default.
        assert_eq!(u.brokers()[0].password.expose(), "guest");
    }

    #[test]
    fn refusals_never_quote_the_url() {
        for url in [
            "no-scheme-here",
            "1abc://h",
            "rabbit://u:secret@h:99999/",
            "rabbit://u:secret@h:x/",
            "rabbit://[::1",
        ] {
            let e = TransportUrl::parse(url).expect_err(url);
            assert!(!e.to_string().contains("secret"), "{e}");
        }
    }

    #[test]
    fn debug_hides_passwords() {
        let u = TransportUrl::parse("rabbit://u:hunter2@h/").unwrap();
        assert!(!format!("{u:?}").contains("hunter2"));
        assert!(!format!("{:?}", u.brokers()).contains("hunter2"));
    }
}
