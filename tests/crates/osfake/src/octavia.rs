//! Octavia v2 load balancers (create, list, show, delete with cascade) and
//! Neutron's floating IPs (list, delete), read-write, per project.
//!
//! A user token sees the load balancers of its project only, and asking for
//! another `project_id` is refused (403), as Octavia's default policy does;
//! the service token is an admin that sees every project. A deleted load
//! balancer turns PENDING_DELETE and disappears after the reads set by
//! [`crate::OsFake::set_delete_delay`]; its VIP port goes with it, so
//! Neutron disassociates the floating IPs that were on it.

use std::collections::HashMap;

use axum::response::Response;
use http::Method;
use serde_json::{Value, json};

use crate::{
    Call, Caller, FloatingIp, LoadBalancer, State, TIMESTAMP, json_response, neutron, no_content,
    page,
};

/// Octavia's (WSME) error body.
pub(crate) fn fault(status: u16, msg: &str) -> Response {
    json_response(
        status,
        json!({"faultcode": "Client", "faultstring": msg, "debuginfo": null}),
    )
}

fn lb_body(lb: &LoadBalancer) -> Value {
    let listeners: Vec<Value> = lb.listeners.iter().map(|l| json!({"id": l})).collect();
    let operating = if lb.provisioning_status == "ACTIVE" {
        "ONLINE"
    } else {
        "OFFLINE"
    };
    json!({
        "id": lb.id, "name": lb.name, "description": lb.description,
        "project_id": lb.project_id, "tenant_id": lb.project_id,
        "provisioning_status": lb.provisioning_status, "operating_status": operating,
        "admin_state_up": true, "vip_address": lb.vip_address, "vip_port_id": lb.vip_port_id,
        "vip_subnet_id": "vip-subnet", "vip_network_id": "vip-network", "vip_qos_policy_id": null,
        "additional_vips": [], "listeners": listeners, "pools": [], "provider": "amphora",
        "flavor_id": null, "availability_zone": null, "tags": lb.tags,
        "created_at": TIMESTAMP, "updated_at": TIMESTAMP,
    })
}

/// Advances the deletions in progress by one read.
fn tick(st: &mut State) {
    let ids: Vec<(String, i64)> = st.pending.iter().map(|(k, v)| (k.clone(), *v)).collect();
    for (id, left) in ids {
        if left < 0 {
            continue;
        }
        if left > 0 {
            st.pending.insert(id, left - 1);
        } else {
            remove(st, &id);
        }
    }
}

/// Drops a load balancer and its VIP port: the floating IPs on the port are
/// disassociated.
fn remove(st: &mut State, id: &str) {
    st.pending.remove(id);
    let Some(i) = st.seed.load_balancers.iter().position(|lb| lb.id == id) else {
        return;
    };
    let port = st.seed.load_balancers.remove(i).vip_port_id;
    if port.is_empty() {
        return;
    }
    for f in &mut st.seed.floating_ips {
        if f.port_id == port {
            f.port_id.clear();
        }
    }
}

/// `base` is the load-balancer prefix the request came in on.
pub(crate) fn serve_load_balancers(
    st: &mut State,
    call: &Call,
    caller: &Caller,
    base: &str,
    raw: &[u8],
) -> Response {
    // Octavia serves the same API under /v2 and /v2.0.
    let Some(rest) = call
        .path
        .strip_prefix("/v2/lbaas/loadbalancers")
        .or_else(|| call.path.strip_prefix("/v2.0/lbaas/loadbalancers"))
    else {
        return fault(404, "The resource could not be found.");
    };
    let id = rest.trim_start_matches('/');
    let visible = |lb: &LoadBalancer| caller.admin || lb.project_id == caller.project;
    match (&call.method, id.is_empty()) {
        (&Method::GET, true) => {
            tick(st);
            let project = call.query.get("project_id").filter(|p| !p.is_empty());
            if let Some(p) = project
                && p != caller.project
                && !caller.admin
            {
                return fault(403, "Policy does not allow this request to be performed.");
            }
            let items: Vec<LoadBalancer> = st
                .seed
                .load_balancers
                .iter()
                .filter(|lb| visible(lb) && project.is_none_or(|p| lb.project_id == p))
                .cloned()
                .collect();
            let mut limit = st.page_size;
            if let Some(n) = call
                .query
                .get("limit")
                .and_then(|v| v.parse::<usize>().ok())
                && (limit == 0 || n < limit)
            {
                limit = n;
            }
            let marker = call.query.get("marker");
            let Some((items, full)) = page(&items, |lb| lb.id.as_str(), marker, limit) else {
                return fault(
                    404,
                    &format!("Load Balancer {} not found.", marker.unwrap_or_default()),
                );
            };
            let mut links = Vec::new();
            if full && let Some(last) = items.last() {
                let mut next = call.query.clone();
                next.set("limit", limit.to_string());
                next.set("marker", last.id.clone());
                links.push(json!({
                    "rel": "next",
                    "href": format!("{base}/v2/lbaas/loadbalancers?{}", next.encode()),
                }));
            }
            json_response(
                200,
                json!({
                    "loadbalancers": items.iter().map(lb_body).collect::<Vec<_>>(),
                    "loadbalancers_links": links,
                }),
            )
        }
        (&Method::GET, false) => {
            tick(st);
            match st
                .seed
                .load_balancers
                .iter()
                .find(|lb| lb.id == id && visible(lb))
            {
                Some(lb) => json_response(200, json!({"loadbalancer": lb_body(lb)})),
                None => fault(404, &format!("Load Balancer {id} not found.")),
            }
        }
        (&Method::POST, true) => create(st, caller, raw),
        (&Method::DELETE, false) => {
            let delay = st.delete_delay;
            let Some(lb) = st
                .seed
                .load_balancers
                .iter_mut()
                .find(|lb| lb.id == id && visible(lb))
            else {
                return fault(404, &format!("Load Balancer {id} not found."));
            };
            let cascade = matches!(
                call.query
                    .get("cascade")
                    .map(str::to_ascii_lowercase)
                    .as_deref(),
                Some("true" | "1" | "t")
            );
            if !lb.listeners.is_empty() && !cascade {
                // Octavia raises ValidationException (400) here.
                return fault(
                    400,
                    &format!(
                        "Validation failure: Cannot delete Load Balancer {id} - it has children"
                    ),
                );
            }
            if lb.provisioning_status != "ACTIVE" && lb.provisioning_status != "ERROR" {
                return fault(
                    409,
                    &format!(
                        "Invalid state {} of loadbalancer resource {id}",
                        lb.provisioning_status
                    ),
                );
            }
            lb.provisioning_status = "PENDING_DELETE".to_owned();
            if delay == 0 {
                remove(st, id);
            } else {
                st.pending.insert(id.to_owned(), delay);
            }
            no_content()
        }
        _ => fault(405, "The method is not allowed by the double."),
    }
}

/// `POST /v2/lbaas/loadbalancers`: a load balancer of the caller's project
/// (an admin may name another), ACTIVE at once, with a VIP port of its own.
/// Octavia requires a VIP subnet, network or port (400 otherwise).
fn create(st: &mut State, caller: &Caller, raw: &[u8]) -> Response {
    let body: Value = serde_json::from_slice(raw).unwrap_or(Value::Null);
    let lb = &body["loadbalancer"];
    let text = |k: &str| lb[k].as_str().unwrap_or_default().to_owned();
    if !lb.is_object()
        || ["vip_subnet_id", "vip_network_id", "vip_port_id"]
            .iter()
            .all(|k| text(k).is_empty())
    {
        return fault(
            400,
            "Validation failure: VIP must contain one of: vip_port_id, vip_network_id, vip_subnet_id.",
        );
    }
    let project = match text("project_id") {
        p if !p.is_empty() && p != caller.project && !caller.admin => {
            return fault(403, "Policy does not allow this request to be performed.");
        }
        p if !p.is_empty() => p,
        _ => caller.project.clone(),
    };
    st.seq += 1;
    let n = st.seq;
    let created = LoadBalancer {
        id: format!("1b000000-0000-4000-8000-{n:012}"),
        name: text("name"),
        description: text("description"),
        project_id: project,
        provisioning_status: "ACTIVE".to_owned(),
        vip_port_id: format!("2b000000-0000-4000-8000-{n:012}"),
        vip_address: format!("10.0.0.{}", 100 + n % 100),
        listeners: Vec::new(),
        tags: Vec::new(),
    };
    let out = lb_body(&created);
    st.seed.load_balancers.push(created);
    json_response(201, json!({ "loadbalancer": out }))
}

fn fip_body(f: &FloatingIp) -> Value {
    let port = if f.port_id.is_empty() {
        Value::Null
    } else {
        Value::String(f.port_id.clone())
    };
    json!({
        "id": f.id, "floating_ip_address": f.address, "port_id": port,
        "project_id": f.project_id, "tenant_id": f.project_id, "description": f.description,
        "floating_network_id": "ext-net", "router_id": null, "fixed_ip_address": null,
        "status": "ACTIVE", "tags": [], "created_at": TIMESTAMP, "updated_at": TIMESTAMP,
        "revision_number": 1,
    })
}

pub(crate) fn serve_floating_ips(st: &mut State, call: &Call, caller: &Caller) -> Response {
    let visible = |f: &FloatingIp| caller.admin || f.project_id == caller.project;
    if call.path == "/v2.0/floatingips" && call.method == Method::GET {
        let out: Vec<Value> = st
            .seed
            .floating_ips
            .iter()
            .filter(|f| {
                visible(f)
                    && crate::matches(
                        &call.query,
                        &HashMap::from([
                            ("id", f.id.clone()),
                            ("port_id", f.port_id.clone()),
                            ("project_id", f.project_id.clone()),
                            ("floating_ip_address", f.address.clone()),
                            ("description", f.description.clone()),
                        ]),
                    )
            })
            .map(fip_body)
            .collect();
        return json_response(200, json!({"floatingips": out}));
    }
    if let Some(id) = call.path.strip_prefix("/v2.0/floatingips/")
        && call.method == Method::DELETE
    {
        let Some(i) = st
            .seed
            .floating_ips
            .iter()
            .position(|f| f.id == id && visible(f))
        else {
            return neutron::not_found(
                "FloatingIPNotFound",
                &format!("Floating IP {id} could not be found"),
            );
        };
        st.seed.floating_ips.remove(i);
        return no_content();
    }
    neutron::not_found("HTTPNotFound", "The resource could not be found.")
}
