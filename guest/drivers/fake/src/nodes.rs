//! The simulated nodes: names, addresses and Nova server uuids derived from
//! the cluster uuid, the nodegroup name and the node's index, so that every
//! process computes the same ones.

use openkeel_magnum_driver::{Cluster, NodeGroup};
use sha1::{Digest, Sha1};

/// Bounds the search for node indices when memberships are recovered from
/// `node_addresses`.
const MAX_RECOVERED_INDEX: i32 = 4096;

/// How far the search goes while no address has matched: a nodegroup this
/// driver built has a node among its first indices unless more than this
/// many were removed before any that remain, while addresses another driver
/// wrote (a database seeded or taken over) match none and end the search
/// here instead of at [`MAX_RECOVERED_INDEX`] (4,096 digests a nodegroup).
const RECOVERY_WINDOW: i32 = 256;

/// The uuid namespace of the fake Nova server uuids,
/// 6f3e4b0a-5c1d-4e58-9a57-0b7f7e1d9c42.
const SERVER_NAMESPACE: [u8; 16] = [
    0x6f, 0x3e, 0x4b, 0x0a, 0x5c, 0x1d, 0x4e, 0x58, 0x9a, 0x57, 0x0b, 0x7f, 0x7e, 0x1d, 0x9c, 0x42,
];

/// One simulated server of a nodegroup.
pub struct Node {
    /// `<stack_id>-<nodegroup name>-<index>`.
    pub name: String,
    /// A fake Nova server uuid (UUIDv5 in `SERVER_NAMESPACE`).
    pub server_id: String,
    /// A fake IPv4 address in 10.0.0.0/8.
    pub address: String,
}

fn sha1(data: &[u8]) -> [u8; 20] {
    Sha1::digest(data).into()
}

/// The fake stack_id of a cluster: "kube-" and five base-36 characters.
pub fn stack_id(cluster_uuid: &str) -> String {
    let sum = sha1(format!("stack/{cluster_uuid}").as_bytes());
    let mut n = u64::from_be_bytes([
        sum[0], sum[1], sum[2], sum[3], sum[4], sum[5], sum[6], sum[7],
    ]);
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = String::from("kube-");
    for _ in 0..5 {
        out.push(DIGITS[(n % 36) as usize] as char);
        n /= 36;
    }
    out
}

/// A stable address in 10.0.0.0/8 derived from `key`; the last octet is
/// never 0 or 255.
fn fake_ip(key: &str) -> String {
    let sum = sha1(format!("ip/{key}").as_bytes());
    format!("10.{}.{}.{}", sum[0], sum[1], 1 + u32::from(sum[2]) % 254)
}

fn node_key(cluster_uuid: &str, ng_name: &str, index: i32) -> String {
    format!("{cluster_uuid}/{ng_name}/{index}")
}

/// UUIDv5 (RFC 9562 § 5.5) of `name` in `namespace`.
fn uuid_v5(namespace: &[u8; 16], name: &[u8]) -> String {
    let mut h = Sha1::new();
    h.update(namespace);
    h.update(name);
    let sum: [u8; 20] = h.finalize().into();
    let mut b = [0u8; 16];
    b.copy_from_slice(&sum[..16]);
    b[6] = (b[6] & 0x0f) | 0x50;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// The simulated node with the given index of a nodegroup.
pub fn node_of(cl: &Cluster, ng: &NodeGroup, index: i32) -> Node {
    let key = node_key(&cl.uuid, &ng.name, index);
    Node {
        name: format!("{}-{}-{index}", stack_id(&cl.uuid), ng.name),
        server_id: uuid_v5(&SERVER_NAMESPACE, key.as_bytes()),
        address: fake_ip(&key),
    }
}

/// The cluster's fake API endpoint.
pub fn api_address(cluster_uuid: &str) -> String {
    format!("https://{}:6443", fake_ip(&format!("{cluster_uuid}/api")))
}

/// The node indices of a nodegroup recovered from its `node_addresses`, or
/// 0..node_count when it has none.
pub fn recover_indices(cl: &Cluster, ng: &NodeGroup) -> Vec<i32> {
    let addresses = ng.node_addresses.as_deref().unwrap_or_default();
    if addresses.is_empty() {
        return (0..ng.node_count.unwrap_or(0)).collect();
    }
    let mut want: Vec<&str> = addresses.iter().map(String::as_str).collect();
    want.sort_unstable();
    want.dedup();
    let mut out: Vec<i32> = Vec::new();
    let mut i = 0;
    while i < MAX_RECOVERED_INDEX && out.len() < want.len() {
        if out.is_empty() && i >= RECOVERY_WINDOW {
            break;
        }
        if want
            .binary_search(&fake_ip(&node_key(&cl.uuid, &ng.name, i)).as_str())
            .is_ok()
        {
            out.push(i);
        }
        i += 1;
    }
    out
}

/// Removes the nodes matched by `to_remove` (server uuid, name or address),
/// then adds indices after the highest one ever used (`next`) or drops the
/// highest until `count` remain (a negative count removes only). Returns
/// the membership and the new `next`.
pub fn resize_indices(
    cl: &Cluster,
    ng: &NodeGroup,
    current: &[i32],
    mut next: i32,
    count: i32,
    to_remove: &[String],
) -> (Vec<i32>, i32) {
    let mut out: Vec<i32> = current
        .iter()
        .copied()
        .filter(|&i| {
            let n = node_of(cl, ng, i);
            !to_remove.iter().any(|r| {
                let r = r.trim();
                r == n.server_id || r == n.name || r == n.address
            })
        })
        .collect();
    if let Some(&last) = current.last()
        && last + 1 > next
    {
        next = last + 1;
    }
    while (out.len() as i64) < i64::from(count) {
        out.push(next);
        next += 1;
    }
    if count >= 0 && out.len() > count as usize {
        out.truncate(count as usize);
    }
    (out, next)
}

/// The addresses of the given nodes.
pub fn addresses(cl: &Cluster, ng: &NodeGroup, indices: &[i32]) -> Vec<String> {
    indices
        .iter()
        .map(|&i| node_of(cl, ng, i).address)
        .collect()
}
