//! Neutron networks and subnets by id or name, with filtered lists.

use std::collections::HashSet;
use std::ops::ControlFlow;

use magnum_domain::{MagnumError, RequestContext};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::clients::{
    Api, Clients, Listing, MAX_PAGES, UserClient, encode_query, is_canonical_uuid,
};
use super::error::{ErrorKind, LookupError, OpenStackError};
use super::{Network, Subnet};

#[derive(Deserialize)]
struct NeutronNetwork {
    #[serde(default)]
    id: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default, rename = "router:external")]
    external: Option<bool>,
}

#[derive(Deserialize)]
struct NeutronSubnet {
    #[serde(default)]
    id: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    network_id: Option<String>,
}

/// The external network (`router:external`) whose name or id is `ident`
/// (Magnum's `validate_external_network`).
///
/// Errors: 400 `ExternalNetworkNotFound`, 409 when several match, 403
/// `AuthorizationFailure` when no Neutron endpoint is available.
pub(crate) async fn external_network(
    clients: &Clients,
    ctx: &RequestContext,
    ident: &str,
) -> Result<Network, LookupError> {
    let mut nets = networks(clients, ctx, ident, true).await?;
    match nets.len() {
        0 => Err(MagnumError::external_network_not_found(ident).into()),
        1 => Ok(nets.remove(0)),
        _ => Err(MagnumError::multiple_openstack_resources(
            "external networks",
            ident,
            "external network",
        )
        .into()),
    }
}

/// The network whose name or id is `ident` among all the networks the caller
/// sees, external ones included (Magnum's `validate_fixed_network`).
///
/// Errors: 400 `FixedNetworkNotFound`, 409 when several match, 403
/// `AuthorizationFailure` when no Neutron endpoint is available.
pub(crate) async fn fixed_network(
    clients: &Clients,
    ctx: &RequestContext,
    ident: &str,
) -> Result<Network, LookupError> {
    let mut nets = networks(clients, ctx, ident, false).await?;
    match nets.len() {
        0 => Err(MagnumError::fixed_network_not_found(ident).into()),
        1 => Ok(nets.remove(0)),
        _ => Err(MagnumError::multiple_openstack_resources("networks", ident, "network").into()),
    }
}

/// The subnet whose name or id is `ident` (Magnum's `validate_fixed_subnet`).
///
/// Errors: 400 `FixedSubnetNotFound`, 409 when several match, 403
/// `AuthorizationFailure` when no Neutron endpoint is available.
pub(crate) async fn fixed_subnet(
    clients: &Clients,
    ctx: &RequestContext,
    ident: &str,
) -> Result<Subnet, LookupError> {
    let c = clients.client(ctx, Api::Network)?;
    let mut found = Vec::new();
    let mut seen = HashSet::new();
    for q in ident_queries(ident, &[]) {
        for s in list::<NeutronSubnet>(&c, "subnets", &q).await? {
            let name = s.name.unwrap_or_default();
            if (s.id == ident || name == ident) && seen.insert(s.id.clone()) {
                found.push(Subnet {
                    id: s.id,
                    name,
                    network_id: s.network_id.unwrap_or_default(),
                });
            }
        }
    }
    match found.len() {
        0 => Err(MagnumError::fixed_subnet_not_found(ident).into()),
        1 => Ok(found.remove(0)),
        _ => Err(MagnumError::multiple_openstack_resources("subnets", ident, "subnet").into()),
    }
}

/// The networks whose name or id is exactly `ident`.
async fn networks(
    clients: &Clients,
    ctx: &RequestContext,
    ident: &str,
    external: bool,
) -> Result<Vec<Network>, LookupError> {
    let c = clients.client(ctx, Api::Network)?;
    let extra: &[(&str, &str)] = if external {
        &[("router:external", "true")]
    } else {
        &[]
    };
    let mut found = Vec::new();
    let mut seen = HashSet::new();
    for q in ident_queries(ident, extra) {
        for n in list::<NeutronNetwork>(&c, "networks", &q).await? {
            let is_external = n.external.unwrap_or(false);
            if external && !is_external {
                continue;
            }
            let name = n.name.unwrap_or_default();
            if (n.id == ident || name == ident) && seen.insert(n.id.clone()) {
                found.push(Network {
                    id: n.id,
                    name,
                    external: is_external,
                });
            }
        }
    }
    Ok(found)
}

/// The filtered queries that together find every resource whose name or id
/// is `ident`: by name, and by id when `ident` can be an id. Neutron ANDs
/// filters, so name-or-id takes two queries.
fn ident_queries(ident: &str, extra: &[(&str, &str)]) -> Vec<String> {
    let with = |key: &str| {
        let mut pairs = extra.to_vec();
        pairs.push((key, ident));
        encode_query(&pairs)
    };
    let mut out = vec![with("name")];
    if is_canonical_uuid(ident) {
        out.push(with("id"));
    }
    out
}

/// Every page of a filtered Neutron list. Neutron paginates only when asked
/// (or when configured to), and answers then with `<resource>_links`.
async fn list<T: DeserializeOwned>(
    c: &UserClient<'_>,
    resource: &str,
    query: &str,
) -> Result<Vec<T>, OpenStackError> {
    let context = &format!("neutron: list {resource}");
    let collection = format!("{}{resource}", c.base);
    let links_key = format!("{resource}_links");
    let listing = Listing {
        first: format!("{collection}?{query}"),
        collection: &collection,
        max_pages: MAX_PAGES,
        context,
    };
    let mut out = Vec::new();
    listing
        .walk(
            |url| async move { c.get(&url, context).await },
            // A missing or null value is an empty list.
            |mut body: Map<String, Value>| {
                Ok((
                    decode(body.remove(resource), context)?,
                    decode(body.remove(&links_key), context)?,
                ))
            },
            |items| {
                out.extend(items);
                ControlFlow::<()>::Continue(())
            },
        )
        .await?;
    Ok(out)
}

fn decode<T: DeserializeOwned>(v: Option<Value>, context: &str) -> Result<Vec<T>, OpenStackError> {
    match v.filter(|v| !v.is_null()) {
        Some(v) => serde_json::from_value(v)
            .map_err(|e| OpenStackError::new(context, ErrorKind::Decode(e.to_string()))),
        None => Ok(Vec::new()),
    }
}
