//! Neutron v2.0: network and subnet show and list, with Neutron's filters
//! and pagination; an empty port list; a project's quota details; the list
//! of API extensions.

use std::collections::HashMap;

use axum::response::Response;
use serde_json::{Value, json};

use crate::{Call, Network, State, Subnet, TIMESTAMP, json_response, matches, page};

fn network_body(n: &Network, subnets: &[Subnet]) -> Value {
    let ids: Vec<&str> = subnets
        .iter()
        .filter(|s| s.network_id == n.id)
        .map(|s| s.id.as_str())
        .collect();
    json!({
        "id": n.id, "name": n.name, "router:external": n.external, "shared": n.shared,
        "status": "ACTIVE", "admin_state_up": true, "subnets": ids, "mtu": 1500,
        "tenant_id": "", "project_id": "", "tags": [], "description": "",
        "created_at": TIMESTAMP, "updated_at": TIMESTAMP, "revision_number": 1,
    })
}

fn subnet_body(s: &Subnet) -> Value {
    json!({
        "id": s.id, "name": s.name, "network_id": s.network_id, "cidr": s.cidr,
        "ip_version": 4, "enable_dhcp": true, "gateway_ip": null, "tenant_id": "",
        "project_id": "", "tags": [], "description": "",
        "created_at": TIMESTAMP, "updated_at": TIMESTAMP, "revision_number": 1,
    })
}

pub(crate) fn not_found(kind: &str, msg: &str) -> Response {
    json_response(
        404,
        json!({"NeutronError": {"type": kind, "message": msg, "detail": ""}}),
    )
}

/// `base` is the network prefix the request came in on (`http://…/network`).
pub(crate) fn serve(st: &State, call: &Call, base: &str) -> Response {
    let path = call.path.as_str();
    let one = |prefix: &str| {
        path.strip_prefix(prefix)
            .filter(|_| path.matches('/').count() == 3)
    };
    if path == "/v2.0/networks" {
        let items: Vec<Network> = st
            .seed
            .networks
            .iter()
            .filter(|n| {
                matches(
                    &call.query,
                    &HashMap::from([
                        ("id", n.id.clone()),
                        ("name", n.name.clone()),
                        ("router:external", n.external.to_string()),
                        ("shared", n.shared.to_string()),
                    ]),
                )
            })
            .cloned()
            .collect();
        let Some((items, links)) = neutron_page(&items, |n| n.id.as_str(), call, st, base) else {
            return not_found(
                "NetworkNotFound",
                &format!(
                    "Network {} could not be found.",
                    call.query.get("marker").unwrap_or_default()
                ),
            );
        };
        let out: Vec<Value> = items
            .iter()
            .map(|n| network_body(n, &st.seed.subnets))
            .collect();
        return list_response("networks", out, links);
    }
    if let Some(id) = one("/v2.0/networks/") {
        return match st.seed.networks.iter().find(|n| n.id == id) {
            Some(n) => json_response(200, json!({"network": network_body(n, &st.seed.subnets)})),
            None => not_found(
                "NetworkNotFound",
                &format!("Network {id} could not be found."),
            ),
        };
    }
    if path == "/v2.0/subnets" {
        let items: Vec<Subnet> = st
            .seed
            .subnets
            .iter()
            .filter(|s| {
                matches(
                    &call.query,
                    &HashMap::from([
                        ("id", s.id.clone()),
                        ("name", s.name.clone()),
                        ("network_id", s.network_id.clone()),
                        ("cidr", s.cidr.clone()),
                    ]),
                )
            })
            .cloned()
            .collect();
        let Some((items, links)) = neutron_page(&items, |s| s.id.as_str(), call, st, base) else {
            return not_found(
                "SubnetNotFound",
                &format!(
                    "Subnet {} could not be found.",
                    call.query.get("marker").unwrap_or_default()
                ),
            );
        };
        return list_response("subnets", items.iter().map(subnet_body).collect(), links);
    }
    if let Some(id) = one("/v2.0/subnets/") {
        return match st.seed.subnets.iter().find(|s| s.id == id) {
            Some(s) => json_response(200, json!({"subnet": subnet_body(s)})),
            None => not_found(
                "SubnetNotFound",
                &format!("Subnet {id} could not be found."),
            ),
        };
    }
    if path == "/v2.0/ports" {
        // The double serves no port: an empty list.
        return list_response("ports", Vec::new(), None);
    }
    if let Some(project) = path
        .strip_prefix("/v2.0/quotas/")
        .and_then(|rest| rest.strip_suffix("/details"))
    {
        return json_response(200, json!({"quota": quota_details(st, project)}));
    }
    if path == "/v2.0/extensions" {
        return json_response(200, json!({"extensions": extensions()}));
    }
    not_found("HTTPNotFound", "The resource could not be found.")
}

/// A project's quotas with their usage (`quotas/{id}/details`): Neutron's
/// defaults, with the networks and subnets of the seed counted as used.
fn quota_details(st: &State, _project: &str) -> Value {
    let used = |name: &str| match name {
        "network" => st.seed.networks.len(),
        "subnet" => st.seed.subnets.len(),
        _ => 0,
    };
    let mut quota = serde_json::Map::new();
    for (name, limit) in [
        ("network", 100),
        ("subnet", 100),
        ("port", 500),
        ("router", 10),
        ("floatingip", 50),
        ("security_group", 10),
        ("security_group_rule", 100),
    ] {
        quota.insert(
            name.into(),
            json!({"used": used(name), "limit": limit, "reserved": 0}),
        );
    }
    Value::Object(quota)
}

/// The API extensions a plain ML2/OVS deployment lists: what a dashboard
/// reads at login to know which network features to show.
fn extensions() -> Vec<Value> {
    [
        ("external-net", "Neutron external network"),
        ("router", "Neutron L3 Router"),
        ("quotas", "Quota management support"),
        ("security-group", "security-group"),
        ("port-security", "Port Security"),
        ("availability_zone", "Availability Zone"),
        ("subnet_allocation", "Subnet Allocation"),
        ("standard-attr-description", "standard-attr-description"),
    ]
    .into_iter()
    .map(|(alias, name)| {
        json!({"alias": alias, "name": name, "description": name,
               "updated": TIMESTAMP, "links": []})
    })
    .collect()
}

/// Paginates when the client sent a limit or a page size is set (Neutron's
/// `pagination_max_limit`), and gives the `<resource>_links` value; Neutron's
/// next links are absolute and carry the limit.
fn neutron_page<T: Clone>(
    items: &[T],
    key: impl Fn(&T) -> &str,
    call: &Call,
    st: &State,
    base: &str,
) -> Option<(Vec<T>, Option<Value>)> {
    let mut limit = st.page_size;
    if let Some(v) = call.query.get("limit") {
        let n = v.parse::<usize>().unwrap_or(0);
        if limit == 0 || n < limit {
            limit = n;
        }
    }
    let (out, full) = page(items, &key, call.query.get("marker"), limit)?;
    if !full {
        return Some((out, None));
    }
    let mut next = call.query.clone();
    next.set("limit", limit.to_string());
    if let Some(last) = out.last() {
        next.set("marker", key(last).to_owned());
    }
    let links = json!([{"rel": "next", "href": format!("{base}{}?{}", call.path, next.encode())}]);
    Some((out, Some(links)))
}

fn list_response(key: &str, items: Vec<Value>, links: Option<Value>) -> Response {
    let mut body = serde_json::Map::new();
    body.insert(key.to_owned(), Value::Array(items));
    if let Some(links) = links {
        body.insert(format!("{key}_links"), links);
    }
    json_response(200, Value::Object(body))
}
