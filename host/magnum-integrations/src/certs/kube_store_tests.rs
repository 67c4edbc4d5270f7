//! The kubernetes store over an in-memory Secrets API (every case of the
//! Go `TestCertStoreFake`) and over a real kube-apiserver started from
//! `TEST_ASSET_KUBE_APISERVER` and `TEST_ASSET_ETCD`
//! (`scripts/ci/kube-apiserver.sh`; Go `TestCertStoreAPIServer`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use test_support::kube::KubeApiServer;

use super::*;
use crate::certs::CLIENT_CERT_NAME;

/// Secrets by (namespace, name), as JSON objects.
type Objects = Arc<Mutex<BTreeMap<(String, String), Value>>>;

fn status(code: StatusCode, reason: &str, message: &str) -> Response<Full<Bytes>> {
    let body = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code.as_u16(),
    });
    answer(code, &body)
}

fn answer(code: StatusCode, body: &Value) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())));
    *r.status_mut() = code;
    r.headers_mut().insert(
        "content-type",
        http::HeaderValue::from_static("application/json"),
    );
    r
}

/// The Secrets part of the Kubernetes API, in memory: create (409 when the
/// name exists), get (404), delete with a UID precondition (404, 409).
fn fake_api(objects: Objects) -> Client {
    let uids = Arc::new(AtomicU64::new(0));
    let svc = tower::service_fn(move |req: Request<kube::client::Body>| {
        let objects = objects.clone();
        let uids = uids.clone();
        async move {
            let (parts, body) = req.into_parts();
            let body = body.collect().await?.to_bytes();
            let path = parts.uri.path().to_owned();
            let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
            let (ns, name) = match segs.as_slice() {
                ["api", "v1", "namespaces", ns, "secrets"] => ((*ns).to_owned(), None),
                ["api", "v1", "namespaces", ns, "secrets", name] => {
                    ((*ns).to_owned(), Some((*name).to_owned()))
                }
                _ => {
                    return Ok::<_, Box<dyn std::error::Error + Send + Sync>>(status(
                        StatusCode::NOT_FOUND,
                        "NotFound",
                        "no such path",
                    ));
                }
            };
            let mut objs = objects.lock().map_err(|_| "poisoned")?;
            let r = match (parts.method, name) {
                (Method::POST, None) => {
                    let mut obj: Value = serde_json::from_slice(&body)?;
                    let name = obj["metadata"]["name"].as_str().unwrap_or("").to_owned();
                    if objs.contains_key(&(ns.clone(), name.clone())) {
                        status(StatusCode::CONFLICT, "AlreadyExists", "already exists")
                    } else {
                        let n = uids.fetch_add(1, Ordering::SeqCst) + 1;
                        obj["metadata"]["uid"] = json!(format!("uid-{n}"));
                        obj["metadata"]["namespace"] = json!(ns.clone());
                        objs.insert((ns, name), obj.clone());
                        answer(StatusCode::CREATED, &obj)
                    }
                }
                (Method::GET, Some(name)) => match objs.get(&(ns, name)) {
                    Some(o) => answer(StatusCode::OK, o),
                    None => status(StatusCode::NOT_FOUND, "NotFound", "not found"),
                },
                (Method::DELETE, Some(name)) => {
                    let opts: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    let key = (ns, name);
                    match objs.get(&key) {
                        None => status(StatusCode::NOT_FOUND, "NotFound", "not found"),
                        Some(o)
                            if opts["preconditions"]["uid"].is_string()
                                && opts["preconditions"]["uid"] != o["metadata"]["uid"] =>
                        {
                            status(StatusCode::CONFLICT, "Conflict", "precondition failed")
                        }
                        Some(_) => {
                            objs.remove(&key);
                            answer(
                                StatusCode::OK,
                                &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 200}),
                            )
                        }
                    }
                }
                _ => status(StatusCode::METHOD_NOT_ALLOWED, "MethodNotAllowed", "no"),
            };
            Ok(r)
        }
    });
    Client::new(svc, "default")
}

fn fixed_name() -> String {
    "00000000-0000-4000-8000-000000000001".into()
}

fn key_pair() -> KeyPair {
    KeyPair {
        certificate: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".into(),
        private_key:
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIC\n-----END ENCRYPTED PRIVATE KEY-----\n"
                .into(),
        passphrase: "pass-phrase".into(),
    }
}

fn caller() -> Owner<'static> {
    Owner {
        project_id: "p1",
        user_id: "u1",
    }
}

fn text_map(v: &Value) -> BTreeMap<String, String> {
    v.as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// Go `checkCertStoreRoundTrip`, with the Secret read through `read`.
async fn round_trip(store: &KubernetesStore, secret: impl AsyncFnOnce(&str) -> Value) -> String {
    let kp = key_pair();
    let r = store.put(caller(), &kp, "demo").await.expect("put");
    assert_eq!(r, "okm-cert-00000000-0000-4000-8000-000000000001");
    let s = secret(&r).await;
    assert_eq!(s["type"], "Opaque");
    assert_eq!(
        text_map(&s["metadata"]["labels"]),
        BTreeMap::from([(LABEL_MANAGED_BY.to_owned(), MANAGED_BY.to_owned())])
    );
    assert_eq!(
        text_map(&s["metadata"]["annotations"]),
        BTreeMap::from([
            (
                "magnum.openstack.org/certificate-name".to_owned(),
                "demo".to_owned()
            ),
            (
                "magnum.openstack.org/project-id".to_owned(),
                "p1".to_owned()
            ),
            ("magnum.openstack.org/user-id".to_owned(), "u1".to_owned()),
        ])
    );
    let b64 = |s: &str| openssl::base64::encode_block(s.as_bytes());
    assert_eq!(
        text_map(&s["data"]),
        BTreeMap::from([
            ("tls.crt".to_owned(), b64(&kp.certificate)),
            ("tls.key".to_owned(), b64(&kp.private_key)),
            ("passphrase".to_owned(), b64(&kp.passphrase)),
        ])
    );
    assert_eq!(store.get(&r).await.expect("get"), kp);
    r
}

/// Go `checkCertStoreDelete`.
async fn delete_twice(store: &KubernetesStore, r: &str, gone: impl AsyncFnOnce(&str) -> bool) {
    store.delete(r).await.expect("delete");
    assert!(gone(r).await, "the Secret is gone");
    assert!(matches!(store.get(r).await, Err(StoreError::NotFound(_))));
    assert!(matches!(
        store.delete(r).await,
        Err(StoreError::NotFound(_))
    ));
}

fn in_memory(objects: &Objects, ns: &str) -> impl AsyncFnOnce(&str) -> Value {
    let objects = objects.clone();
    let ns = ns.to_owned();
    async move |name: &str| {
        objects
            .lock()
            .expect("lock")
            .get(&(ns, name.to_owned()))
            .cloned()
            .expect("the Secret exists")
    }
}

fn absent(objects: &Objects, ns: &str) -> impl AsyncFnOnce(&str) -> bool {
    let objects = objects.clone();
    let ns = ns.to_owned();
    async move |name: &str| {
        !objects
            .lock()
            .expect("lock")
            .contains_key(&(ns, name.to_owned()))
    }
}

#[tokio::test]
async fn round_trip_and_delete_in_the_default_namespace() {
    let objects = Objects::default();
    let store = KubernetesStore::new(fake_api(objects.clone()), "").with_names(fixed_name);
    let r = round_trip(&store, in_memory(&objects, DEFAULT_NAMESPACE)).await;
    delete_twice(&store, &r, absent(&objects, DEFAULT_NAMESPACE)).await;
}

#[tokio::test]
async fn the_namespace_is_the_configured_one() {
    let objects = Objects::default();
    let client = fake_api(objects.clone());
    let store = KubernetesStore::new(client.clone(), "mgmt").with_names(fixed_name);
    let r = round_trip(&store, in_memory(&objects, "mgmt")).await;
    let other = KubernetesStore::new(client, "");
    assert!(matches!(other.get(&r).await, Err(StoreError::NotFound(_))));
}

#[tokio::test]
async fn new_names_are_random_uuids() {
    let store = KubernetesStore::new(fake_api(Objects::default()), "");
    let a = store
        .put(Owner::default(), &key_pair(), CLIENT_CERT_NAME)
        .await
        .expect("put");
    let b = store
        .put(Owner::default(), &key_pair(), CLIENT_CERT_NAME)
        .await
        .expect("put");
    assert_ne!(a, b);
    for n in [&a, &b] {
        assert!(is_cert_secret_name(n), "{n}");
        assert_eq!(n.len(), CERT_SECRET_PREFIX.len() + 36);
    }
}

#[tokio::test]
async fn secrets_the_store_does_not_own_are_unknown() {
    let objects = Objects::default();
    {
        let mut o = objects.lock().expect("lock");
        o.insert(
            (DEFAULT_NAMESPACE.into(), "okm-cert-foreign".into()),
            json!({"apiVersion": "v1", "kind": "Secret",
                   "metadata": {"name": "okm-cert-foreign", "namespace": DEFAULT_NAMESPACE, "uid": "f"},
                   "data": {"tls.crt": "eA=="}}),
        );
        o.insert(
            (DEFAULT_NAMESPACE.into(), "kube-abcde-ca".into()),
            json!({"apiVersion": "v1", "kind": "Secret",
                   "metadata": {"name": "kube-abcde-ca", "namespace": DEFAULT_NAMESPACE, "uid": "o",
                                "labels": {LABEL_MANAGED_BY: MANAGED_BY}}}),
        );
    }
    let store = KubernetesStore::new(fake_api(objects.clone()), "");
    for r in [
        "okm-cert-00000000-0000-4000-8000-000000000009",
        "okm-cert-foreign",
        "kube-abcde-ca",
        "2c4a9b9e-5d5e-4a52-9e49-0c2f1ac1f0b1",
        "",
        "okm-cert-",
        "okm-cert-a/b",
        "okm-cert-ABC",
        "okm-cert-a-",
    ] {
        assert!(
            matches!(store.get(r).await, Err(StoreError::NotFound(_))),
            "get {r:?}"
        );
        assert!(
            matches!(store.delete(r).await, Err(StoreError::NotFound(_))),
            "delete {r:?}"
        );
    }
    assert_eq!(objects.lock().expect("lock").len(), 2, "nothing deleted");
}

#[tokio::test]
async fn without_a_caller_only_the_name_is_annotated() {
    let objects = Objects::default();
    let store = KubernetesStore::new(fake_api(objects.clone()), "").with_names(fixed_name);
    let r = store
        .put(Owner::default(), &key_pair(), CLIENT_CERT_NAME)
        .await
        .expect("put");
    let s = in_memory(&objects, DEFAULT_NAMESPACE)(&r).await;
    assert_eq!(
        text_map(&s["metadata"]["annotations"]),
        BTreeMap::from([(
            "magnum.openstack.org/certificate-name".to_owned(),
            CLIENT_CERT_NAME.to_owned()
        )])
    );
}

#[tokio::test]
async fn a_secret_replaced_under_the_same_name_is_not_deleted() {
    let objects = Objects::default();
    let store = KubernetesStore::new(fake_api(objects.clone()), "").with_names(fixed_name);
    let r = store.put(caller(), &key_pair(), "demo").await.expect("put");
    // The read before the delete sees uid-1; the object is then replaced.
    let key = (DEFAULT_NAMESPACE.to_owned(), r.clone());
    let mut replaced = objects.lock().expect("lock")[&key].clone();
    replaced["metadata"]["uid"] = json!("uid-other");
    let s = store.read(&r).await.expect("read");
    objects.lock().expect("lock").insert(key.clone(), replaced);
    let dp = DeleteParams {
        preconditions: Some(Preconditions {
            uid: s.metadata.uid.clone(),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    let e = store.secrets.delete(&r, &dp).await.expect_err("conflict");
    assert!(
        matches!(e, kube::Error::Api(ref s) if s.is_conflict()),
        "{e}"
    );
    assert!(objects.lock().expect("lock").contains_key(&key));
}

#[tokio::test]
async fn backend_errors_name_the_secret_and_carry_no_key_material() {
    let svc = tower::service_fn(|_req: Request<kube::client::Body>| async {
        Ok::<_, std::convert::Infallible>(status(
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalError",
            "etcd is down",
        ))
    });
    let store = KubernetesStore::new(Client::new(svc, "default"), "").with_names(fixed_name);
    let e = store
        .put(caller(), &key_pair(), "demo")
        .await
        .expect_err("the server fails");
    let text = e.to_string();
    assert!(
        text.contains("magnum-system/okm-cert-00000000-0000-4000-8000-000000000001"),
        "{text}"
    );
    assert!(text.contains("etcd is down"), "{text}");
    for secret in ["MIIC", "pass-phrase", "MIIB"] {
        assert!(!text.contains(secret), "{text}");
    }
}

/// A kube-apiserver over an etcd (test-support's), with a client of its
/// admin; stopped when dropped.
struct ApiServer {
    client: Client,
    _server: KubeApiServer,
}

/// The API server, serving, or `None` (skip) when the binaries are not
/// configured; unset on CI is a failure.
async fn api_server() -> Option<ApiServer> {
    let server = KubeApiServer::start("AlwaysAllow")?;
    let url: http::Uri = server.url.parse().expect("URL");
    let mut config = kube::Config::new(url);
    config.accept_invalid_certs = true;
    config.auth_info.token = Some(server.token.clone().into());
    let client = Client::try_from(config).expect("client");
    // Ready when a namespace can be created (the apiserver needs etcd and
    // its bootstrap; bounded at 90 s).
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    let ns: k8s_openapi::api::core::v1::Namespace = serde_json::from_value(json!({
        "metadata": {"name": DEFAULT_NAMESPACE}
    }))
    .expect("namespace");
    let mut ready = false;
    for _ in 0..900 {
        match namespaces.create(&PostParams::default(), &ns).await {
            Ok(_) => {
                ready = true;
                break;
            }
            Err(kube::Error::Api(s)) if s.code == 409 => {
                ready = true;
                break;
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
        }
    }
    assert!(ready, "kube-apiserver did not become ready in 90 s");
    Some(ApiServer {
        client,
        _server: server,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_trip_on_a_real_api_server() {
    let Some(server) = api_server().await else {
        return;
    };
    let store =
        KubernetesStore::new(server.client.clone(), DEFAULT_NAMESPACE).with_names(fixed_name);
    let secrets: Api<Secret> = Api::namespaced(server.client.clone(), DEFAULT_NAMESPACE);
    let read = {
        let secrets = secrets.clone();
        async move |name: &str| {
            serde_json::to_value(secrets.get(name).await.expect("get")).expect("JSON")
        }
    };
    let r = round_trip(&store, read).await;
    let gone = async move |name: &str| secrets.get_opt(name).await.expect("get").is_none();
    delete_twice(&store, &r, gone).await;
    assert!(matches!(
        store.get("okm-cert-Not_A-Name").await,
        Err(StoreError::NotFound(_))
    ));
}
