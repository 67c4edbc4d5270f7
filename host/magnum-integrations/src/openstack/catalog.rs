//! Service catalogs: parsing the forms a token's catalog travels in, choosing
//! an endpoint by service type, interface and region as keystoneauth does,
//! deriving a service's roots from its URL, and the per-catalog cache.

use std::collections::HashMap;
use std::sync::Mutex;

use serde::Deserialize;
use sha2::{Digest, Sha256};

/// One endpoint of a catalog entry. Keystone v3 lists one object per
/// interface; the v2 format lists one object per region with a URL field per
/// interface.
#[derive(Clone, Debug, Default, Deserialize)]
pub(crate) struct CatalogEndpoint {
    #[serde(default)]
    interface: Option<String>,
    #[serde(default)]
    region: Option<String>,
    #[serde(default)]
    region_id: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default, rename = "publicURL")]
    public_url: Option<String>,
    #[serde(default, rename = "internalURL")]
    internal_url: Option<String>,
    #[serde(default, rename = "adminURL")]
    admin_url: Option<String>,
}

/// One service of a catalog.
#[derive(Clone, Debug, Default, Deserialize)]
pub(crate) struct CatalogEntry {
    #[serde(default, rename = "type")]
    service_type: Option<String>,
    #[serde(default)]
    endpoints: Option<Vec<CatalogEndpoint>>,
}

#[derive(Deserialize)]
struct Wrapped {
    #[serde(default)]
    catalog: Option<Vec<CatalogEntry>>,
    #[serde(default, rename = "serviceCatalog")]
    service_catalog: Option<Vec<CatalogEntry>>,
    #[serde(default)]
    token: Option<TokenCatalog>,
    #[serde(default)]
    access: Option<AccessCatalog>,
}

#[derive(Deserialize)]
struct TokenCatalog {
    #[serde(default)]
    catalog: Option<Vec<CatalogEntry>>,
}

#[derive(Deserialize)]
struct AccessCatalog {
    #[serde(default, rename = "serviceCatalog")]
    service_catalog: Option<Vec<CatalogEntry>>,
}

/// Parses the forms a token's catalog travels in: the bare array
/// (keystonemiddleware's `X-Service-Catalog` header), `{"catalog": […]}`, a
/// whole token body `{"token": {"catalog": […]}}`, and the v2
/// `{"serviceCatalog": […]}` / `{"access": {"serviceCatalog": […]}}`.
pub(crate) fn parse_catalog(raw: &[u8]) -> Result<Vec<CatalogEntry>, String> {
    let raw = raw.trim_ascii();
    if raw.is_empty() || raw == b"null" {
        return Ok(Vec::new());
    }
    let fail = |e: serde_json::Error| format!("decode service catalog: {e}");
    if raw.starts_with(b"[") {
        return serde_json::from_slice(raw).map_err(fail);
    }
    let w: Wrapped = serde_json::from_slice(raw).map_err(fail)?;
    Ok(if let Some(t) = w.token {
        t.catalog.unwrap_or_default()
    } else if let Some(a) = w.access {
        a.service_catalog.unwrap_or_default()
    } else if let Some(c) = w.catalog {
        c
    } else {
        w.service_catalog.unwrap_or_default()
    })
}

/// Maps the oslo `endpoint_type` spellings (`publicURL`, `internalURL`,
/// `adminURL`) to Keystone v3 interfaces; empty means public.
pub(crate) fn normalize_interface(endpoint_type: &str) -> &str {
    match endpoint_type.strip_suffix("URL").unwrap_or(endpoint_type) {
        "" => "public",
        s => s,
    }
}

/// The first endpoint of `service_type` with the interface and (when not
/// empty) the region, in catalog order, as keystoneauth's
/// `ServiceCatalog.endpoint_data_for` picks it. The error texts are
/// keystoneauth's (keystoneauth1/access/service_catalog.py), with the
/// interface spelled as configured.
pub(crate) fn endpoint_url(
    entries: &[CatalogEntry],
    service_type: &str,
    endpoint_type: &str,
    region: &str,
) -> Result<String, String> {
    if entries.is_empty() {
        return Err("The service catalog is empty.".to_owned());
    }
    let iface = normalize_interface(endpoint_type);
    for e in entries {
        if e.service_type.as_deref() != Some(service_type) {
            continue;
        }
        for ep in e.endpoints.iter().flatten() {
            if !region.is_empty()
                && ep.region.as_deref() != Some(region)
                && ep.region_id.as_deref() != Some(region)
            {
                continue;
            }
            let url = match ep.interface.as_deref().unwrap_or_default() {
                // The v2 form: one URL field per interface.
                "" => match iface {
                    "public" => ep.public_url.as_deref(),
                    "internal" => ep.internal_url.as_deref(),
                    "admin" => ep.admin_url.as_deref(),
                    _ => None,
                },
                i if normalize_interface(i) == iface => ep.url.as_deref(),
                _ => continue,
            };
            if let Some(u) = url.filter(|u| !u.is_empty()) {
                return Ok(u.to_owned());
            }
        }
    }
    // Magnum's default endpoint_type.
    let endpoint_type = if endpoint_type.is_empty() {
        "publicURL"
    } else {
        endpoint_type
    };
    if region.is_empty() {
        Err(format!(
            "{endpoint_type} endpoint for {service_type} service not found"
        ))
    } else {
        Err(format!(
            "{endpoint_type} endpoint for {service_type} service in {region} region not found"
        ))
    }
}

/// Whether `s` names an API version (`v2`, `v2.1`).
fn is_version(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('v') else {
        return false;
    };
    let (major, minor) = match rest.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (rest, None),
    };
    let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    digits(major) && minor.is_none_or(digits)
}

/// The unversioned root (where Glance's relative next links start) and the
/// versioned resource base of a service, from a catalog or configured URL,
/// both ending in `/`. Glance and Neutron are usually listed without a
/// version (`http://glance:9292`), Nova with one (`http://nova:8774/v2.1`,
/// possibly followed by a project id). `want` is the version appended when
/// the URL has none: `v2` for Glance, `v2.1` for Nova, `v2.0` for Neutron.
pub(crate) fn service_roots(raw: &str, want: &str) -> Result<(String, String), String> {
    let trimmed = raw.trim();
    let mut u = url::Url::parse(trimmed).map_err(|e| format!("endpoint {trimmed:?}: {e}"))?;
    if !matches!(u.scheme(), "http" | "https") || u.host_str().is_none_or(str::is_empty) {
        return Err(format!("endpoint {raw} is not an http(s) URL"));
    }
    u.set_query(None);
    u.set_fragment(None);
    let path = u.path().trim_matches('/').to_owned();
    let segs: Vec<&str> = if path.is_empty() {
        Vec::new()
    } else {
        path.split('/').collect()
    };
    let with_path = |u: &url::Url, p: &str| {
        let mut c = u.clone();
        c.set_path(p);
        with_slash(c.as_str())
    };
    if let Some(i) = segs.iter().position(|s| is_version(s)) {
        let root = with_path(&u, &format!("/{}", segs[..i].join("/")));
        let base = with_path(&u, &format!("/{}", segs.join("/")));
        return Ok((root, base));
    }
    let root = with_path(&u, &format!("/{}", segs.join("/")));
    let base = format!("{root}{want}/");
    Ok((root, base))
}

fn with_slash(s: &str) -> String {
    if s.ends_with('/') {
        s.to_owned()
    } else {
        format!("{s}/")
    }
}

/// How many catalogs [`EndpointCache`] remembers before it starts over.
const ENDPOINT_CACHE_SIZE: usize = 256;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct EndpointKey {
    service_type: String,
    endpoint_type: String,
    region: String,
}

/// The endpoints resolved from service catalogs: every request of a token
/// carries the same catalog, and decoding it for each OpenStack call of a
/// request showed in the profile of cluster creates (Go implementation).
/// Catalogs are keyed by their SHA-256; only successful resolutions are
/// kept; at most [`ENDPOINT_CACHE_SIZE`] catalogs are held (the cache starts
/// over when full).
#[derive(Debug, Default)]
pub(crate) struct EndpointCache {
    entries: Mutex<HashMap<[u8; 32], HashMap<EndpointKey, String>>>,
}

impl EndpointCache {
    /// [`parse_catalog`] + [`endpoint_url`] through the cache.
    pub(crate) fn resolve(
        &self,
        raw: &[u8],
        service_type: &str,
        endpoint_type: &str,
        region: &str,
    ) -> Result<String, String> {
        let digest: [u8; 32] = Sha256::digest(raw).into();
        let key = EndpointKey {
            service_type: service_type.to_owned(),
            endpoint_type: endpoint_type.to_owned(),
            region: region.to_owned(),
        };
        if let Some(ep) = self.lock().get(&digest).and_then(|by_key| by_key.get(&key)) {
            return Ok(ep.clone());
        }
        let entries = parse_catalog(raw)?;
        let ep = endpoint_url(&entries, service_type, endpoint_type, region)?;
        let mut m = self.lock();
        if m.len() >= ENDPOINT_CACHE_SIZE && !m.contains_key(&digest) {
            m.clear();
        }
        m.entry(digest).or_default().insert(key, ep.clone());
        Ok(ep)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], HashMap<EndpointKey, String>>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    #[cfg(test)]
    pub(crate) fn catalogs(&self) -> usize {
        self.lock().len()
    }
}

/// A pagination link rebuilt on the client's own collection URL, keeping
/// only its query: services behind proxies often advertise hosts the caller
/// cannot reach, and Glance's links are relative.
pub(crate) fn next_url(collection: &str, link: &str) -> Result<String, String> {
    let parsed = match url::Url::parse(link) {
        Ok(u) => u,
        Err(url::ParseError::RelativeUrlWithoutBase) => url::Url::parse("http://relative.invalid")
            .and_then(|b| b.join(link))
            .map_err(|e| format!("pagination link {link:?}: {e}"))?,
        Err(e) => return Err(format!("pagination link {link:?}: {e}")),
    };
    match parsed.query().filter(|q| !q.is_empty()) {
        Some(q) => Ok(format!("{collection}?{q}")),
        None => Err(format!("pagination link {link:?} has no marker")),
    }
}
