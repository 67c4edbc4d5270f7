//! The objects the Cluster API driver writes for a cluster created through
//! `openstack coe`, compared with the goldens the Go implementation's
//! envtest suite read back from its kube-apiserver
//! (`guest/drivers/capi/testdata/go-reference/envtest/`, described in the README
//! of that folder).
//!
//! The cluster is made as the Go test made it: the template `okm-capi-ct`
//! (image `ubuntu-2204-kube`, external network `public`, keypair `kp1`,
//! `m1.small` for both flavors, calico, DNS server `8.8.8.8`,
//! `kube_tag=v1.30.2`) and the cluster `okm-capi` of one master and one
//! node, as `demo`. The simulator is paused while the driver writes, so
//! that the objects are read as the Go test read them: before any
//! controller ran. Every Secret, ConfigMap and namespaced custom resource of
//! the namespace that belongs to the cluster (its name holds the cluster's
//! UUID or stack ID) or to its class (the name of its `classRef`) is read,
//! reduced as the Go test reduced it, and compared with the golden of its
//! kind as parsed YAML values: a difference is reported by the JSON
//! pointer of the field, a kind without a golden, a golden without its
//! kind, an object missing from a golden or one more than it holds fail.
//!
//! Where the Rust driver differs from the Go one on purpose, the golden is
//! changed first by one [`Deliberate`] entry of [`DELIBERATE`] (the object,
//! the JSON pointer and the value the Rust driver writes there); each is a
//! row of docs/compatibility.md. Where the test environment differs from
//! the Go test's (the region's name, Cinder in the catalog), [`environment`]
//! says how.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde::Deserialize as _;
use serde_json::{Value, json};

use crate::capi_sim::Sim;
use crate::harness::{
    Check, EXT_NET_NAME, FLAVOR_SMALL, IMAGE_NAME, KEYPAIR, Stack, Suite, blocking_client,
};
use crate::kube::CapiApiServer;
use crate::osc::{Osc, json_out, ok};

/// The namespace of the driver's objects (`[capi]/namespace`).
const NS: &str = "magnum-system";
/// The field manager of the driver's server-side applies.
const FIELD_MANAGER: &str = "openkeel-magnum-capi";
/// The region of the Go test's cloud, in its goldens.
const GO_REGION: &str = "okm-envtest-capi";
/// The type of the Secrets a ClusterResourceSet reads.
const ADDON_SECRET_TYPE: &str = "addons.cluster.x-k8s.io/resource-set";
/// The keys of the `-cloud-provider` add-on Secret that Cinder in the
/// catalog adds: absent from the goldens (the Go test's catalog had no
/// Cinder), present here (the stack's volume types are `standard`, `ssd`).
const CINDER_KEYS: [&str; 3] = [
    "cinder-csi.yaml",
    "storageclass-block-standard.yaml",
    "storageclass-block-ssd.yaml",
];

/// A field where the Rust driver writes something else than the Go driver
/// did, on purpose: the golden is changed at `pointer` of the object
/// `object` (`Kind/name` with the golden's placeholders) before the
/// comparison.
struct Deliberate {
    object: &'static str,
    /// A JSON pointer (RFC 6901) into the reduced object.
    pointer: &'static str,
    /// The Rust driver's value there; `None`: it writes nothing there.
    rust: fn() -> Option<Value>,
    /// Whether the value is an element the Rust driver adds to the list
    /// at `pointer` (inserted before the golden's element of that index)
    /// rather than a replacement of the golden's.
    insert: bool,
    /// Why, in the words of docs/compatibility.md's row.
    why: &'static str,
}

/// The deliberate differences, each a row of docs/compatibility.md.
const DELIBERATE: &[Deliberate] = &[
    Deliberate {
        object: "ClusterClass/magnum-v0.38.2-openkeel.1",
        // The `imageRepository` patch's second definition, on the workers'
        // KubeadmConfigTemplate.
        pointer: "/spec/patches/14/definitions/1",
        rust: || None,
        insert: false,
        why: "the class's imageRepository patch is on the control plane only: the Go class \
              patched the workers' KubeadmConfigTemplate at a path it does not have",
    },
    Deliberate {
        object: "Secret/<stack-id>-cloud-config",
        pointer: "/data (decoded)/cacert",
        rust: || None,
        insert: false,
        why: "cacert of <stack_id>-cloud-config without a CA bundle is left out, not written empty",
    },
    Deliberate {
        object: "Secret/<stack-id>-cloud-config",
        // `none`: the stack's cloud has no CA bundle.
        pointer: "/metadata/annotations/magnum.openstack.org~1cloud-ca-digest",
        rust: || Some(json!("none")),
        insert: false,
        why: "a new cloud CA bundle is written into every cluster's -cloud-config Secret, by \
              comparing a digest recorded on the Secret (annotation \
              magnum.openstack.org/cloud-ca-digest) with the bundle's",
    },
    // The class variable of `api_master_lb_allowed_cidrs`: declared, set
    // (to no CIDR: the cluster has no such label) and patched into the
    // OpenStackClusterTemplate after the load balancer's own patch; the
    // sorted lists put it before `apiServerSANs`.
    Deliberate {
        object: "ClusterClass/magnum-v0.38.2-openkeel.1",
        pointer: "/spec/variables/3",
        rust: || {
            Some(json!({
                "name": "apiServerLoadBalancerAllowedCIDRs",
                "required": true,
                "schema": { "openAPIV3Schema": { "type": "array", "items": { "type": "string" } } },
            }))
        },
        insert: true,
        why: "api_master_lb_allowed_cidrs: the API load balancer's allowedCIDRs, through a class \
              variable of the driver's own class (apiServerLoadBalancerAllowedCIDRs)",
    },
    Deliberate {
        object: "ClusterClass/magnum-v0.38.2-openkeel.1",
        pointer: "/spec/patches/4",
        rust: || {
            Some(json!({
                "name": "apiServerLoadBalancerAllowedCIDRs",
                "enabledIf": "{{ if .apiServerLoadBalancerAllowedCIDRs }}true{{ end }}",
                "definitions": [{
                    "selector": {
                        "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                        "kind": "OpenStackClusterTemplate",
                        "matchResources": { "infrastructureCluster": true },
                    },
                    "jsonPatches": [{
                        "op": "add",
                        "path": "/spec/template/spec/apiServerLoadBalancer/allowedCIDRs",
                        "valueFrom": { "variable": "apiServerLoadBalancerAllowedCIDRs" },
                    }],
                }],
            }))
        },
        insert: true,
        why: "api_master_lb_allowed_cidrs: the API load balancer's allowedCIDRs, through a class \
              variable of the driver's own class (apiServerLoadBalancerAllowedCIDRs)",
    },
    Deliberate {
        object: "Cluster/<stack-id>",
        pointer: "/spec/topology/variables/3",
        rust: || Some(json!({ "name": "apiServerLoadBalancerAllowedCIDRs", "value": [] })),
        insert: true,
        why: "api_master_lb_allowed_cidrs: the API load balancer's allowedCIDRs, through a class \
              variable of the driver's own class (apiServerLoadBalancerAllowedCIDRs)",
    },
];

/// Adds the steps to `suite`: a template and a cluster as the Go test made
/// them, and the comparison of what the driver wrote with the goldens.
pub fn steps(s: &Stack, o: &Osc<'_>, mgmt: &CapiApiServer, sim: &Sim, suite: &mut Suite<'_>) {
    let token = || s.token("demo", "demo");
    suite.step(
        "the objects of a cluster made as the Go envtest suite made it match its goldens",
        |c| {
            // No controller acts on what the driver writes until it is read.
            sim.pause(true);
            let read = made_and_read(c, s, o, mgmt, &token());
            sim.pause(false);
            let Some(read) = read else { return };
            let objects = read.objects;
            let mut replace = vec![
                (read.uuid.clone(), "<cluster-uuid>".to_owned()),
                (read.stack.clone(), "<stack-id>".to_owned()),
                (read.ac_id.clone(), "<application-credential-id>".to_owned()),
                (
                    read.ac_secret.clone(),
                    "<application-credential-secret>".to_owned(),
                ),
                (read.user_id.clone(), "<demo-user-id>".to_owned()),
                (
                    s.identity()
                        .url
                        .trim_end_matches('/')
                        .trim_end_matches("/v3")
                        .to_owned(),
                    "<keystone-url>".to_owned(),
                ),
            ];
            for (id, name) in server_groups(s, &token()) {
                let name = name.replace(&read.stack, "<stack-id>");
                replace.push((id, format!("<server-group-id:{name}>")));
            }
            let mut got: BTreeMap<String, Vec<Value>> = BTreeMap::new();
            for o in &objects {
                let kind = o["kind"].as_str().unwrap_or_default().to_lowercase();
                got.entry(kind).or_default().push(reduce(o, &replace));
            }
            environment(c, &mut got);
            let n: usize = got.values().map(Vec::len).sum();
            let diffs = compare(&got);
            eprintln!(
                "cluster api goldens: {} kinds, {n} objects compared with the Go envtest goldens, \
                 {} deliberate differences, {} differences",
                got.len(),
                DELIBERATE.len(),
                diffs.len()
            );
            for d in diffs {
                c.error(d);
            }
            // The shared Keystone keeps no credential of this cluster.
            let url = format!(
                "{}/users/{}/application_credentials/{}",
                s.identity().url.trim_end_matches('/'),
                read.user_id,
                read.ac_id
            );
            let _ = blocking_client(Duration::from_secs(30))
                .delete(url)
                .header("X-Auth-Token", token())
                .send();
        },
    );
}

/// What the Go test knew when it compared.
struct Read {
    uuid: String,
    stack: String,
    user_id: String,
    ac_id: String,
    ac_secret: String,
    /// The cluster's and its class's objects, as listed.
    objects: Vec<Value>,
}

/// Creates the template and the cluster, waits for the driver's create to
/// have returned (the stack ID saved, the Cluster applied), and reads the
/// objects.
fn made_and_read(
    c: &mut Check,
    s: &Stack,
    o: &Osc<'_>,
    mgmt: &CapiApiServer,
    token: &str,
) -> Option<Read> {
    let r = o.run_as(
        c,
        "demo",
        &format!(
            "coe cluster template create okm-capi-ct --image {IMAGE_NAME} \
             --external-network {EXT_NET_NAME} --coe kubernetes --keypair {KEYPAIR} \
             --flavor {FLAVOR_SMALL} --master-flavor {FLAVOR_SMALL} --network-driver calico \
             --dns-nameserver 8.8.8.8 --labels kube_tag=v1.30.2 -f json"
        ),
    );
    json_out(c, &r)?;
    let r = o.run_as(
        c,
        "demo",
        "coe cluster create okm-capi --cluster-template okm-capi-ct --master-count 1 \
         --node-count 1",
    );
    ok(c, &r, &["Request to create cluster"]);
    let uuid = r
        .stdout
        .split_whitespace()
        .find(|w| w.len() == 36 && w.matches('-').count() == 4)
        .unwrap_or_else(|| c.fatal(format!("no uuid:\n{r}")))
        .to_owned();
    let deadline = Instant::now() + Duration::from_secs(60);
    let (stack, user_id) = loop {
        let (_, body) = s
            .api(token, "GET", &format!("/v1/clusters/{uuid}"), "1.12", None)
            .unwrap_or_else(|e| c.fatal(e));
        let stack = body["stack_id"].as_str().unwrap_or_default();
        if !stack.is_empty()
            && mgmt
                .server
                .get(&format!(
                    "/apis/cluster.x-k8s.io/v1beta2/namespaces/{NS}/clusters/{stack}"
                ))
                .is_some()
        {
            let user = body["user_id"].as_str().unwrap_or_default().to_owned();
            break (stack.to_owned(), user);
        }
        if Instant::now() > deadline {
            c.fatal(format!("no stack_id and Cluster within 60 s: {body}"));
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let all = list_namespace(mgmt);
    let class = all
        .iter()
        .find(|o| o["kind"] == "Cluster" && o["metadata"]["name"] == stack.as_str())
        .map(|o| o["spec"]["topology"]["classRef"]["name"].clone())
        .and_then(|n| n.as_str().map(str::to_owned))
        .unwrap_or_else(|| c.fatal("the Cluster has no classRef"));
    let objects: Vec<Value> = all
        .into_iter()
        .filter(|o| {
            let name = o["metadata"]["name"].as_str().unwrap_or_default();
            name.contains(&uuid) || name.contains(&stack) || name == class
        })
        .collect();
    for o in &objects {
        let managers: Vec<&str> = o["metadata"]["managedFields"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["manager"].as_str())
            .collect();
        if managers != [FIELD_MANAGER] {
            c.error(format!(
                "{} {}: field managers {managers:?}, want only {FIELD_MANAGER}",
                o["kind"], o["metadata"]["name"]
            ));
        }
    }
    let config = objects
        .iter()
        .find(|o| o["kind"] == "Secret" && o["metadata"]["name"] == format!("{stack}-cloud-config"))
        .unwrap_or_else(|| c.fatal(format!("no Secret {stack}-cloud-config")));
    let clouds = decoded(&config["data"]["clouds.yaml"]);
    let field = |key: &str| -> Option<String> {
        clouds
            .lines()
            .find_map(|l| l.trim().strip_prefix(&format!("{key}:")))
            .map(|v| v.trim().trim_matches('"').to_owned())
    };
    let (Some(ac_id), Some(ac_secret)) = (
        field("application_credential_id"),
        field("application_credential_secret"),
    ) else {
        c.fatal(format!(
            "no application credential in clouds.yaml:\n{clouds}"
        ));
    };
    Some(Read {
        uuid,
        stack,
        user_id,
        ac_id,
        ac_secret,
        objects,
    })
}

/// Every Secret, ConfigMap and namespaced custom resource of [`NS`] (each
/// custom resource in the version its CRD stores), with its `apiVersion`
/// and `kind` set.
fn list_namespace(mgmt: &CapiApiServer) -> Vec<Value> {
    let mut paths = vec![
        (
            "v1".to_owned(),
            "Secret".to_owned(),
            format!("/api/v1/namespaces/{NS}/secrets"),
        ),
        (
            "v1".to_owned(),
            "ConfigMap".to_owned(),
            format!("/api/v1/namespaces/{NS}/configmaps"),
        ),
    ];
    for crd in &mgmt.crds {
        if crd.spec.scope != "Namespaced" {
            continue;
        }
        for v in crd.spec.versions.iter().filter(|v| v.storage) {
            let group = &crd.spec.group;
            paths.push((
                format!("{group}/{}", v.name),
                crd.spec.names.kind.clone(),
                format!(
                    "/apis/{group}/{}/namespaces/{NS}/{}",
                    v.name, crd.spec.names.plural
                ),
            ));
        }
    }
    let mut out = Vec::new();
    for (api_version, kind, path) in paths {
        // A custom resource nothing has listed yet may answer 429 while its
        // storage initialises.
        let deadline = Instant::now() + Duration::from_secs(30);
        let list: Value = loop {
            match mgmt.server.call("GET", &path, None) {
                (200, text) => break serde_json::from_str(&text).unwrap_or_default(),
                (429, _) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(200));
                }
                (status, text) => panic!("GET {path}: {status} {text}"),
            }
        };
        for mut o in list["items"].as_array().cloned().unwrap_or_default() {
            o["apiVersion"] = json!(api_version);
            o["kind"] = json!(kind);
            out.push(o);
        }
    }
    out
}

/// The caller's server groups in the Nova double: (id, name).
fn server_groups(s: &Stack, token: &str) -> Vec<(String, String)> {
    let url = format!("{}/os-server-groups", s.cloud["compute"]);
    let body: Value = blocking_client(Duration::from_secs(30))
        .get(&url)
        .header("X-Auth-Token", token)
        .send()
        .and_then(|r| r.json())
        .unwrap_or_else(|e| panic!("GET {url}: {e}"));
    body["server_groups"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|g| Some((g["id"].as_str()?.to_owned(), g["name"].as_str()?.to_owned())))
        .collect()
}

/// A base64 `data` value, decoded.
fn decoded(v: &Value) -> String {
    let b = base64::engine::general_purpose::STANDARD
        .decode(v.as_str().unwrap_or_default())
        .unwrap_or_default();
    String::from_utf8(b).unwrap_or_else(|_| "<undecodable>".to_owned())
}

/// The object as the Go test wrote it into its goldens: without the
/// metadata the server generates, a Secret's data decoded under
/// `data (decoded)` with PEM bodies masked and add-on manifests summarised,
/// and every generated value replaced by its placeholder (`replace`, in
/// order, then `<timestamp>` for RFC 3339 times).
fn reduce(o: &Value, replace: &[(String, String)]) -> Value {
    let mut o = o.clone();
    if let Some(m) = o["metadata"].as_object_mut() {
        for f in [
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "managedFields",
            "generation",
        ] {
            m.remove(f);
        }
    }
    if o["kind"] == "Secret" {
        let addons = o["type"] == ADDON_SECRET_TYPE;
        if let Some(data) = o.as_object_mut().and_then(|m| m.remove("data")) {
            let mut out = serde_json::Map::new();
            for (k, v) in data.as_object().cloned().unwrap_or_default() {
                let text = decoded(&v);
                let text = if addons && k != "cloud-config-secret.yaml" {
                    manifest_summary(&text)
                } else {
                    mask_pem(&text)
                };
                out.insert(k, Value::String(text));
            }
            o["data (decoded)"] = Value::Object(out);
        }
    }
    placeholders(o, replace)
}

/// Every string and key of `v` with `replace` applied in order, then RFC
/// 3339 times replaced with `<timestamp>`.
fn placeholders(v: Value, replace: &[(String, String)]) -> Value {
    let fix = |s: &str| -> String {
        let mut s = s.to_owned();
        for (from, to) in replace {
            if !from.is_empty() {
                s = s.replace(from.as_str(), to);
            }
        }
        timestamps(&s)
    };
    match v {
        Value::String(s) => Value::String(fix(&s)),
        Value::Array(a) => Value::Array(a.into_iter().map(|v| placeholders(v, replace)).collect()),
        Value::Object(m) => Value::Object(
            m.into_iter()
                .map(|(k, v)| (fix(&k), placeholders(v, replace)))
                .collect(),
        ),
        other => other,
    }
}

/// `s` with every `YYYY-MM-DDTHH:MM:SS(.frac)Z` replaced by `<timestamp>`.
fn timestamps(s: &str) -> String {
    const SHAPE: &[u8] = b"dddd-dd-ddTdd:dd:dd";
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        let fits = b.len() - i >= SHAPE.len()
            && SHAPE.iter().zip(&b[i..]).all(|(p, c)| match p {
                b'd' => c.is_ascii_digit(),
                p => p == c,
            });
        if fits {
            let mut j = i + SHAPE.len();
            if b.get(j) == Some(&b'.') && b.get(j + 1).is_some_and(u8::is_ascii_digit) {
                j += 1;
                while b.get(j).is_some_and(u8::is_ascii_digit) {
                    j += 1;
                }
            }
            if b.get(j) == Some(&b'Z') {
                out.push_str("<timestamp>");
                i = j + 1;
                continue;
            }
        }
        let ch = s[i..].chars().next().unwrap_or_default();
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// `text` with the body of every PEM block replaced with `<masked>`.
fn mask_pem(text: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in text.split_inclusive('\n') {
        let l = line.trim_end();
        if l.starts_with("-----BEGIN ") && l.ends_with("-----") {
            inside = true;
            out.push_str(line);
            out.push_str("<masked>\n");
        } else if l.starts_with("-----END ") && l.ends_with("-----") {
            inside = false;
            out.push_str(line);
        } else if !inside {
            out.push_str(line);
        }
    }
    out
}

/// The Go test's summary of a stream of Kubernetes objects: their number,
/// one `apiVersion kind namespace/name` line each, then the container
/// images (sorted, once each).
fn manifest_summary(stream: &str) -> String {
    let mut objects = Vec::new();
    for doc in serde_norway::Deserializer::from_str(stream) {
        match Value::deserialize(doc) {
            Ok(Value::Null) => {}
            Ok(v) if v["apiVersion"].is_string() && v["kind"].is_string() => objects.push(v),
            Ok(v) => return format!("<not a Kubernetes object: {v}>"),
            Err(e) => return format!("<not a stream of Kubernetes objects: {e}>"),
        }
    }
    let mut out = format!("{} objects:\n", objects.len());
    let mut images: Vec<String> = Vec::new();
    for o in &objects {
        let name = o["metadata"]["name"].as_str().unwrap_or_default();
        let name = match o["metadata"]["namespace"].as_str() {
            Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
            _ => name.to_owned(),
        };
        let _ = writeln!(
            out,
            "{} {} {name}",
            o["apiVersion"].as_str().unwrap_or_default(),
            o["kind"].as_str().unwrap_or_default()
        );
        for pod in [&o["spec"]["template"]["spec"], &o["spec"]] {
            for key in ["initContainers", "containers"] {
                for c in pod[key].as_array().into_iter().flatten() {
                    if let Some(img) = c["image"].as_str().filter(|i| !i.is_empty())
                        && !images.iter().any(|i| i == img)
                    {
                        images.push(img.to_owned());
                    }
                }
            }
        }
    }
    images.sort();
    if !images.is_empty() {
        out.push_str("images:\n");
        for i in images {
            out.push_str(&i);
            out.push('\n');
        }
    }
    out
}

/// Where this stack is not the Go test's: it configures no
/// `[keystone_authtoken]/region_name` (the Go test did), so the driver
/// writes no region into `cloud.conf` and `clouds.yaml`, and the goldens'
/// region lines are dropped (the driver's unit tests check those lines);
/// and its catalog has Cinder with the
/// volume types `standard` and `ssd`, so the `-cloud-provider` add-on
/// Secret carries Cinder CSI and a StorageClass per volume type, which the
/// goldens cannot have: those keys must be there, and are left out of the
/// comparison.
fn environment(c: &mut Check, got: &mut BTreeMap<String, Vec<Value>>) {
    let addons = got
        .get_mut("secret")
        .into_iter()
        .flatten()
        .find(|s| s["metadata"]["name"] == "<stack-id>-cloud-provider");
    let Some(data) = addons.and_then(|s| s["data (decoded)"].as_object_mut()) else {
        c.error("no add-on Secret <stack-id>-cloud-provider");
        return;
    };
    for key in CINDER_KEYS {
        if data.remove(key).is_none() {
            c.error(format!(
                "<stack-id>-cloud-provider has no {key} though Cinder is in the catalog"
            ));
        }
    }
}

/// The golden of `kind` (`<kind>.yaml`), its objects by name, the region
/// renamed to this stack's.
fn golden(kind: &str) -> Option<BTreeMap<String, Value>> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../guest/drivers/capi/testdata/go-reference/envtest")
        .join(format!("{kind}.yaml"));
    let text = std::fs::read_to_string(&path).ok()?;
    // The region lines of `cloud.conf` and `clouds.yaml`: see
    // [`environment`].
    let text: String = text
        .lines()
        .filter(|l| !l.ends_with(GO_REGION))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut out = BTreeMap::new();
    for doc in serde_norway::Deserializer::from_str(&text) {
        let v = Value::deserialize(doc).unwrap_or_else(|e| panic!("parse {}: {e}", path.display()));
        if v.is_null() {
            continue;
        }
        let name = v["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        out.insert(name, v);
    }
    Some(out)
}

/// The kinds that have a golden.
fn golden_kinds() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../guest/drivers/capi/testdata/go-reference/envtest");
    let mut kinds: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .filter_map(|e| {
            let p = e.ok()?.path();
            (p.extension()? == "yaml").then(|| p.file_stem()?.to_str().map(str::to_owned))?
        })
        .collect();
    kinds.sort();
    kinds
}

/// The Secret keys that hold YAML documents (not summarised): compared as
/// their parsed values, since the Rust driver writes them as JSON (which is
/// YAML) and quotes scalars the Go driver did not.
const YAML_KEYS: [&str; 2] = ["clouds.yaml", "cloud-config-secret.yaml"];

/// `o` with the values of [`YAML_KEYS`] of its `data (decoded)` parsed.
fn parsed(mut o: Value) -> Value {
    if let Some(data) = o["data (decoded)"].as_object_mut() {
        for key in YAML_KEYS {
            if let Some(text) = data.get(key).and_then(Value::as_str) {
                let docs: Result<Vec<Value>, _> = serde_norway::Deserializer::from_str(text)
                    .map(Value::deserialize)
                    .collect();
                if let Ok(mut docs) = docs {
                    docs.retain(|d| !d.is_null());
                    data.insert(key.to_owned(), Value::Array(docs));
                }
            }
        }
    }
    o
}

/// The differences between what was read (`got`, by kind) and the goldens
/// with [`DELIBERATE`] applied.
fn compare(got: &BTreeMap<String, Vec<Value>>) -> Vec<String> {
    let mut out = Vec::new();
    let kinds = golden_kinds();
    for kind in got.keys().filter(|k| !kinds.contains(k)) {
        out.push(format!(
            "{kind}: written, but the Go driver wrote no such object"
        ));
    }
    let mut used = vec![false; DELIBERATE.len()];
    for kind in &kinds {
        let mut want = golden(kind).unwrap_or_default();
        for (i, d) in DELIBERATE.iter().enumerate() {
            let (k, name) = d.object.split_once('/').unwrap_or_default();
            if k.to_lowercase() != *kind {
                continue;
            }
            let Some(object) = want.get_mut(name) else {
                continue;
            };
            used[i] = true;
            if let Err(e) = set_pointer(object, d.pointer, (d.rust)(), d.insert) {
                out.push(format!("{} {}: {e} ({})", d.object, d.pointer, d.why));
            }
        }
        let mut have: BTreeMap<String, Value> = BTreeMap::new();
        for o in got.get(kind).into_iter().flatten() {
            let name = o["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            have.insert(name, o.clone());
        }
        for (name, w) in &want {
            match have.get(name) {
                Some(g) => {
                    for d in differences(&parsed(w.clone()), &parsed(g.clone())) {
                        out.push(format!("{kind} {name}: {d}"));
                    }
                }
                None => out.push(format!("{kind} {name}: in the golden, not written")),
            }
        }
        for name in have.keys().filter(|n| !want.contains_key(*n)) {
            out.push(format!("{kind} {name}: written, not in the golden"));
        }
    }
    for (d, used) in DELIBERATE.iter().zip(used) {
        if !used {
            out.push(format!("{}: no such object in the goldens", d.object));
        }
    }
    out
}

/// Sets (`Some`) or removes (`None`) the value at `pointer` of `v`; the
/// parent must exist.
fn set_pointer(
    v: &mut Value,
    pointer: &str,
    value: Option<Value>,
    insert: bool,
) -> Result<(), String> {
    let (parent, last) = pointer
        .rsplit_once('/')
        .ok_or_else(|| format!("{pointer} is not a JSON pointer"))?;
    let last = last.replace("~1", "/").replace("~0", "~");
    let p = v
        .pointer_mut(parent)
        .ok_or_else(|| format!("the golden has no {parent}"))?;
    match (p, value) {
        (Value::Object(m), Some(x)) => {
            m.insert(last, x);
        }
        (Value::Object(m), None) => {
            m.remove(&last)
                .ok_or_else(|| format!("the golden has no {pointer}"))?;
        }
        (Value::Array(a), value) => {
            let i: usize = last
                .parse()
                .map_err(|_| format!("{last} is not an index"))?;
            if i >= a.len() {
                return Err(format!("the golden has no {pointer}"));
            }
            match value {
                Some(x) if insert => a.insert(i, x),
                Some(x) => a[i] = x,
                None => {
                    a.remove(i);
                }
            }
        }
        _ => return Err(format!("{parent} of the golden is not a container")),
    }
    Ok(())
}

/// The differences between `want` and `got`, one line per JSON pointer;
/// multi-line strings by their lines.
fn differences(want: &Value, got: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk("", want, got, &mut out);
    out
}

fn walk(path: &str, want: &Value, got: &Value, out: &mut Vec<String>) {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (key, wv) in w {
                let here = format!("{path}/{}", key.replace('~', "~0").replace('/', "~1"));
                match g.get(key) {
                    Some(gv) => walk(&here, wv, gv, out),
                    None => out.push(format!("{here}: missing, want {}", short(wv))),
                }
            }
            for (key, gv) in g.iter().filter(|(k, _)| !w.contains_key(*k)) {
                let here = format!("{path}/{}", key.replace('~', "~0").replace('/', "~1"));
                out.push(format!("{here}: unexpected {}", short(gv)));
            }
        }
        (Value::Array(w), Value::Array(g)) => {
            for (i, (wv, gv)) in w.iter().zip(g).enumerate() {
                walk(&format!("{path}/{i}"), wv, gv, out);
            }
            if w.len() != g.len() {
                out.push(format!("{path}: {} items, want {}", g.len(), w.len()));
            }
        }
        (Value::String(w), Value::String(g))
            if w != g && (w.contains('\n') || g.contains('\n')) =>
        {
            let wl: Vec<&str> = w.lines().collect();
            let gl: Vec<&str> = g.lines().collect();
            let gone: Vec<&&str> = wl.iter().filter(|l| !gl.contains(l)).collect();
            let new: Vec<&&str> = gl.iter().filter(|l| !wl.contains(l)).collect();
            out.push(format!(
                "{path}: text differs: lines missing {gone:?}, lines unexpected {new:?}{}",
                if gone.is_empty() && new.is_empty() {
                    " (order or repetition)"
                } else {
                    ""
                }
            ));
        }
        _ if want != got => out.push(format!(
            "{}: got {}, want {}",
            if path.is_empty() { "/" } else { path },
            short(got),
            short(want)
        )),
        _ => {}
    }
}

/// A value as compact JSON, cut after 300 characters.
fn short(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

#[test]
fn the_reduction_is_the_go_tests() {
    let pem = "a\n-----BEGIN PRIVATE KEY-----\nMIIB\nAAA=\n-----END PRIVATE KEY-----\n";
    assert_eq!(
        mask_pem(pem),
        "a\n-----BEGIN PRIVATE KEY-----\n<masked>\n-----END PRIVATE KEY-----\n"
    );
    assert_eq!(
        timestamps("at 2025-01-02T03:04:05Z and 2025-01-02T03:04:05.123Z, not 2025-01-02"),
        "at <timestamp> and <timestamp>, not 2025-01-02"
    );
    let stream = "---\n{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"a\",\"namespace\":\"kube-system\"}}\n---\n\
                  {\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"metadata\":{\"name\":\"d\"},\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"image\":\"b:1\"},{\"image\":\"a:1\"}],\"initContainers\":[{\"image\":\"b:1\"}]}}}}\n";
    assert_eq!(
        manifest_summary(stream),
        "2 objects:\nv1 ServiceAccount kube-system/a\napps/v1 DaemonSet d\nimages:\na:1\nb:1\n"
    );
    let replace = [("abc".to_owned(), "<x>".to_owned())];
    assert_eq!(
        placeholders(json!({"abc-1": ["abc", 1]}), &replace),
        json!({"<x>-1": ["<x>", 1]})
    );
    let mut v = json!({"a": {"b": [1, 2]}});
    set_pointer(&mut v, "/a/b/0", None, false).unwrap();
    set_pointer(&mut v, "/a/c", Some(json!(3)), false).unwrap();
    assert_eq!(v, json!({"a": {"b": [2], "c": 3}}));
    set_pointer(&mut v, "/a/b/0", Some(json!(1)), true).unwrap();
    set_pointer(&mut v, "/a/b/1", Some(json!(5)), false).unwrap();
    assert_eq!(v, json!({"a": {"b": [1, 5], "c": 3}}));
    assert!(set_pointer(&mut v, "/x/y", None, false).is_err());
    assert_eq!(
        differences(
            &json!({"t": "a\nb\n", "n": 1}),
            &json!({"t": "a\nc\n", "n": 2})
        ),
        vec![
            "/t: text differs: lines missing [\"b\"], lines unexpected [\"c\"]",
            "/n: got 2, want 1",
        ]
    );
}

/// The comparison on the goldens themselves: they match once the
/// deliberate differences are applied, and a changed field fails by its
/// pointer.
#[test]
fn a_changed_field_fails_the_comparison() {
    let mut got: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for kind in golden_kinds() {
        let mut objects = golden(&kind).unwrap_or_default();
        for d in DELIBERATE {
            let (k, name) = d.object.split_once('/').unwrap_or_default();
            if let Some(o) = objects.get_mut(name).filter(|_| k.to_lowercase() == kind) {
                set_pointer(o, d.pointer, (d.rust)(), d.insert).unwrap();
            }
        }
        got.insert(kind, objects.into_values().collect());
    }
    assert_eq!(compare(&got), Vec::<String>::new());
    let cluster = &mut got.get_mut("cluster").unwrap()[0];
    cluster["spec"]["topology"]["controlPlane"]["replicas"] = json!(3);
    assert_eq!(
        compare(&got),
        vec!["cluster <stack-id>: /spec/topology/controlPlane/replicas: got 3, want 1"]
    );
}
