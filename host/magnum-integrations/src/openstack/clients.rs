//! [`Clients`]: the lookups of Glance, Nova and Neutron as the caller of an
//! API request — the caller's token, endpoints from the caller's catalog
//! selected like keystoneauth does from the `[glance_client]`,
//! `[nova_client]` and `[neutron_client]` `region_name` and `endpoint_type`
//! options (or fixed endpoints).

use std::fmt;
use std::future::Future;
use std::ops::ControlFlow;
use std::sync::Arc;

use http::{HeaderMap, HeaderName, HeaderValue, Method};
use magnum_domain::{MagnumError, RequestContext};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde::de::DeserializeOwned;

use super::catalog::{EndpointCache, next_url, service_roots};
use super::error::{ErrorKind, OpenStackError, SettingsError};
use super::session::{Reply, Session};
use super::{Flavor, Found, Image, Keypair, Lookup, Network, Subnet, flavors, images, networks};

/// The pages read for one lookup at most, so that a service that keeps
/// answering with next links cannot hold a request forever.
pub(crate) const MAX_PAGES: usize = 50;

/// One `[<service>_client]` group: how a service is found.
#[derive(Clone, Debug, Default)]
pub struct EndpointSettings {
    /// `region_name`: only catalog endpoints of this region are used
    /// (`None` or empty: any region).
    pub region_name: Option<String>,
    /// `endpoint_type`: `publicURL` (also when empty), `internalURL` or
    /// `adminURL`; the v3 spellings `public`, `internal`, `admin` are
    /// accepted too.
    pub endpoint_type: String,
    /// A fixed endpoint used instead of the catalog (tests, single-node
    /// setups).
    pub endpoint: Option<String>,
}

impl EndpointSettings {
    pub(crate) fn region(&self) -> &str {
        self.region_name.as_deref().unwrap_or_default()
    }

    /// Checks a fixed endpoint; `group` names the option group in the error.
    pub(crate) fn check(&self, group: &str, version: &str) -> Result<(), SettingsError> {
        match self.endpoint.as_deref().filter(|e| !e.is_empty()) {
            Some(e) => service_roots(e, version)
                .map(|_| ())
                .map_err(|err| SettingsError(format!("[{group}] endpoint: {err}"))),
            None => Ok(()),
        }
    }
}

/// The settings of [`Clients`].
#[derive(Clone, Debug, Default)]
pub struct ClientsSettings {
    /// `[glance_client]`.
    pub glance: EndpointSettings,
    /// `[nova_client]`.
    pub nova: EndpointSettings,
    /// `[neutron_client]`.
    pub neutron: EndpointSettings,
}

/// One of the services the lookups read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Api {
    Image,
    Compute,
    Network,
}

impl Api {
    /// Magnum's client name, used in `AuthorizationFailure`.
    fn client(self) -> &'static str {
        match self {
            Api::Image => "glance",
            Api::Compute => "nova",
            Api::Network => "neutron",
        }
    }

    fn catalog_type(self) -> &'static str {
        match self {
            Api::Image => "image",
            Api::Compute => "compute",
            Api::Network => "network",
        }
    }

    /// The version appended to an unversioned endpoint.
    pub(crate) fn version(self) -> &'static str {
        match self {
            Api::Image => "v2",
            Api::Compute => "v2.1",
            Api::Network => "v2.0",
        }
    }
}

/// The real [`Lookup`]: Glance, Nova and Neutron as the caller of the request
/// context. Cheap to clone.
///
/// Requests per lookup, compared with Magnum's validators:
///
/// - image: `GET /v2/images/{x}` when `x` is a UUID; when that is 404, 400
///   or 403, or `x` is a name, `GET /v2/images?name=x` (openstacksdk's
///   `find_image` makes the same calls, the first even for a name);
/// - flavor: `GET /flavors/{x}`; when that is 404 or 400, `GET
///   /flavors/detail` page by page until the first flavor named `x`. Nova has
///   no name filter on its flavor list, so a name costs a listing (Magnum
///   lists every flavor for every check, even for an id);
/// - keypair: `GET /os-keypairs/{x}`;
/// - networks and subnets: `GET /v2.0/networks?name=x` (with
///   `router:external=true` for the external network), plus `?id=x` when
///   `x` is a UUID; Magnum lists every network or subnet instead.
///
/// A call that cannot be made (no token, no endpoint) is Magnum's 403
/// `AuthorizationFailure`; unexpected answers (5xx, timeouts, undecodable
/// bodies) are [`LookupError::Failed`], which Magnum answers with a 500.
#[derive(Clone)]
pub struct Clients {
    inner: Arc<Inner>,
}

struct Inner {
    session: Session,
    settings: ClientsSettings,
    endpoints: EndpointCache,
}

impl fmt::Debug for Clients {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Clients")
            .field("settings", &self.inner.settings)
            .finish_non_exhaustive()
    }
}

/// A client of one service acting as the caller.
pub(crate) struct UserClient<'a> {
    session: &'a Session,
    token: String,
    headers: HeaderMap,
    /// The versioned resource base, ending in `/`.
    pub(crate) base: String,
}

impl UserClient<'_> {
    /// One GET; any status is returned.
    pub(crate) async fn get(&self, url: &str, context: &str) -> Result<Reply, OpenStackError> {
        self.session
            .request(Method::GET, url, &self.token, None, &self.headers, context)
            .await
    }
}

const X_OPENSTACK_REQUEST_ID: HeaderName = HeaderName::from_static("x-openstack-request-id");

impl Clients {
    /// Checks the fixed endpoints; nothing is contacted.
    pub fn new(session: Session, settings: ClientsSettings) -> Result<Self, SettingsError> {
        settings
            .glance
            .check("glance_client", Api::Image.version())?;
        settings.nova.check("nova_client", Api::Compute.version())?;
        settings
            .neutron
            .check("neutron_client", Api::Network.version())?;
        Ok(Self {
            inner: Arc::new(Inner {
                session,
                settings,
                endpoints: EndpointCache::default(),
            }),
        })
    }

    /// The bound of each call.
    pub fn timeout(&self) -> std::time::Duration {
        self.inner.session.timeout()
    }

    fn settings(&self, api: Api) -> &EndpointSettings {
        match api {
            Api::Image => &self.inner.settings.glance,
            Api::Compute => &self.inner.settings.nova,
            Api::Network => &self.inner.settings.neutron,
        }
    }

    #[cfg(test)]
    pub(crate) fn endpoint_cache(&self) -> &EndpointCache {
        &self.inner.endpoints
    }

    /// A client of `api` with the token and catalog of `ctx`. Failures are
    /// Magnum's `AuthorizationFailure` (403), with keystoneauth's texts
    /// (magnum/common/clients.py wraps them with "unexpected client error
    /// occurred: ").
    pub(crate) fn client(
        &self,
        ctx: &RequestContext,
        api: Api,
    ) -> Result<UserClient<'_>, MagnumError> {
        let Some(token) = ctx.auth_token.as_deref().filter(|t| !t.is_empty()) else {
            // Magnum: magnum/common/keystone.py, no token in the context.
            return Err(MagnumError::authorization_failure(
                "keystone",
                "reason Keystone API connection failed: no password or token found.",
            ));
        };
        let unexpected = |e: String| {
            MagnumError::authorization_failure(
                api.client(),
                &format!("unexpected client error occurred: {e}"),
            )
        };
        let so = self.settings(api);
        let endpoint = match so.endpoint.as_deref().filter(|e| !e.is_empty()) {
            Some(e) => e.to_owned(),
            None => self
                .inner
                .endpoints
                .resolve(
                    ctx.service_catalog.as_deref().unwrap_or_default(),
                    api.catalog_type(),
                    &so.endpoint_type,
                    so.region(),
                )
                .map_err(unexpected)?,
        };
        let (_, base) = service_roots(&endpoint, api.version()).map_err(unexpected)?;
        let mut headers = HeaderMap::new();
        if is_request_id(&ctx.request_id)
            && let Ok(v) = HeaderValue::from_str(&ctx.request_id)
        {
            headers.insert(X_OPENSTACK_REQUEST_ID, v);
        }
        Ok(UserClient {
            session: &self.inner.session,
            token: token.to_owned(),
            headers,
            base,
        })
    }
}

// Deviation: Magnum lists every flavor, network and subnet for each check;
// these are direct GETs and filtered lists, with the same outcome and errors
// (a flavor value that is one flavor's id and another's name is the one with
// that id, see flavors.rs).
impl Lookup for Clients {
    fn image<'a>(&'a self, ctx: &'a RequestContext, ident: &'a str) -> Found<'a, Image> {
        Box::pin(images::image(self, ctx, ident))
    }

    fn flavor<'a>(&'a self, ctx: &'a RequestContext, ident: &'a str) -> Found<'a, Flavor> {
        Box::pin(flavors::flavor(self, ctx, ident))
    }

    fn keypair<'a>(&'a self, ctx: &'a RequestContext, name: &'a str) -> Found<'a, Keypair> {
        Box::pin(flavors::keypair(self, ctx, name))
    }

    fn external_network<'a>(
        &'a self,
        ctx: &'a RequestContext,
        ident: &'a str,
    ) -> Found<'a, Network> {
        Box::pin(networks::external_network(self, ctx, ident))
    }

    fn fixed_network<'a>(&'a self, ctx: &'a RequestContext, ident: &'a str) -> Found<'a, Network> {
        Box::pin(networks::fixed_network(self, ctx, ident))
    }

    fn fixed_subnet<'a>(&'a self, ctx: &'a RequestContext, ident: &'a str) -> Found<'a, Subnet> {
        Box::pin(networks::fixed_subnet(self, ctx, ident))
    }
}

/// Whether `s` is in the form OpenStack services generate
/// (`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, lower-case hex). An id filter is
/// only sent for such values: nothing else can be a Neutron id, and a
/// case-insensitive database collation must not turn an upper-case value
/// into a match that Magnum's exact comparison would not make.
pub(crate) fn is_canonical_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_digit() || (b'a'..=b'f').contains(c),
        })
}

/// Whether `s` parses as a UUID the way Python's `uuid.UUID` (and so oslo's
/// `is_uuid_like`) accepts it: optional `urn:uuid:` prefix, braces and
/// hyphens, 32 hexadecimal digits in any case.
pub(crate) fn is_uuid_like(s: &str) -> bool {
    let s = s.replace("urn:", "").replace("uuid:", "");
    let s = s.trim_matches(|c| c == '{' || c == '}').replace('-', "");
    s.len() == 32 && s.bytes().all(|c| c.is_ascii_hexdigit())
}

/// Whether `ident` can be put in a URL path as one segment without changing
/// which resource the path names.
pub(crate) fn is_path_safe(ident: &str) -> bool {
    !ident.is_empty() && ident != "." && ident != ".."
}

/// The request ids oslo.middleware accepts as a global request id from
/// another service: `req-` and a canonical UUID.
fn is_request_id(s: &str) -> bool {
    s.strip_prefix("req-").is_some_and(is_canonical_uuid)
}

/// What a path segment leaves unescaped (Go's `url.PathEscape`).
const PATH_SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~')
    .remove(b'$')
    .remove(b'&')
    .remove(b'+')
    .remove(b':')
    .remove(b'=')
    .remove(b'@');

/// What a query component leaves unescaped (Go's `url.QueryEscape`).
const QUERY_COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// `s` escaped as one path segment.
pub(crate) fn path_segment(s: &str) -> String {
    utf8_percent_encode(s, PATH_SEGMENT).to_string()
}

/// A query string from `pairs`, keys sorted (stable), values escaped as a
/// query component (a space as `+`), as Go's `url.Values.Encode` writes it.
pub(crate) fn encode_query(pairs: &[(&str, &str)]) -> String {
    let mut sorted = pairs.to_vec();
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    let esc = |s: &str| {
        utf8_percent_encode(s, QUERY_COMPONENT)
            .to_string()
            .replace("%20", "+")
    };
    sorted
        .iter()
        .map(|(k, v)| format!("{}={}", esc(k), esc(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// The `href` of the `rel: next` link of a `<resource>_links` list, if any
/// (the last one wins, as Go reads them).
pub(crate) fn next_link(links: &[Link]) -> Option<&str> {
    links
        .iter()
        .rev()
        .find(|l| l.rel.as_deref() == Some("next"))
        .and_then(|l| l.href.as_deref())
        .filter(|h| !h.is_empty())
}

/// A paginated list of Nova, Neutron, Octavia or Cinder: where its pages
/// are, how many of them are read at most, and the context of its errors.
pub(crate) struct Listing<'a> {
    /// The collection's URL, which the next links are rebuilt on.
    pub(crate) collection: &'a str,
    /// The first page's URL (the collection with its query).
    pub(crate) first: String,
    pub(crate) max_pages: usize,
    pub(crate) context: &'a str,
}

/// How the reading of a [`Listing`] ended.
pub(crate) enum Walk<B> {
    /// The visitor stopped it with its answer.
    Stopped(B),
    /// A page without a next link, or without items, was the last.
    Done,
    /// The service still had pages after the most that are read.
    Truncated,
}

impl Listing<'_> {
    /// Reads the pages: `get` answers a page's URL, whose body (a 200)
    /// decodes as `P`; `split` takes its items and its `*_links` apart;
    /// `visit` sees each page's items and may stop the reading.
    pub(crate) async fn walk<P, T, B, Fut>(
        self,
        mut get: impl FnMut(String) -> Fut,
        mut split: impl FnMut(P) -> Result<(Vec<T>, Vec<Link>), OpenStackError>,
        mut visit: impl FnMut(Vec<T>) -> ControlFlow<B>,
    ) -> Result<Walk<B>, OpenStackError>
    where
        P: DeserializeOwned,
        Fut: Future<Output = Result<Reply, OpenStackError>>,
    {
        let context = self.context;
        let mut next = self.first;
        for _ in 0..self.max_pages {
            let page: P = get(next).await?.expect(&[200], context)?.json(context)?;
            let (items, links) = split(page)?;
            let empty = items.is_empty();
            if let ControlFlow::Break(answer) = visit(items) {
                return Ok(Walk::Stopped(answer));
            }
            let Some(link) = next_link(&links) else {
                return Ok(Walk::Done);
            };
            if empty {
                return Ok(Walk::Done);
            }
            next = next_url(self.collection, link)
                .map_err(|e| OpenStackError::new(context, ErrorKind::Decode(e)))?;
        }
        Ok(Walk::Truncated)
    }
}

/// An item of Nova's, Neutron's, Octavia's and Cinder's `*_links` lists.
#[derive(Clone, Debug, Default, serde::Deserialize)]
pub(crate) struct Link {
    #[serde(default)]
    pub(crate) rel: Option<String>,
    #[serde(default)]
    pub(crate) href: Option<String>,
}
