//! A real kube-apiserver over an etcd, from the binaries
//! `TEST_ASSET_KUBE_APISERVER` and `TEST_ASSET_ETCD` name
//! (`scripts/ci/kube-apiserver.sh`), with a static admin token and a
//! kubeconfig file for the binary under test; stopped when dropped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::harness::{free_port, in_ci};

/// A running API server.
pub struct ApiServer {
    pub url: String,
    token: String,
    /// A kubeconfig naming the server and the token.
    kubeconfig: PathBuf,
    children: Vec<Child>,
    _dir: tempfile::TempDir,
}

impl Drop for ApiServer {
    fn drop(&mut self) {
        // The API server first, then its etcd.
        for c in self.children.iter_mut().rev() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The API server, or `None` (skipped, with a message) when the binaries
/// are not configured; unset when `CI=true` is a failure.
pub fn api_server() -> Option<ApiServer> {
    let (Ok(apiserver), Ok(etcd)) = (
        std::env::var("TEST_ASSET_KUBE_APISERVER"),
        std::env::var("TEST_ASSET_ETCD"),
    ) else {
        assert!(
            !in_ci(),
            "TEST_ASSET_KUBE_APISERVER and TEST_ASSET_ETCD must be set when CI=true"
        );
        eprintln!(
            "skipped: TEST_ASSET_KUBE_APISERVER and TEST_ASSET_ETCD are not set; run: eval \"$(scripts/ci/kube-apiserver.sh)\""
        );
        return None;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let p = |n: &str| dir.path().join(n);
    let (etcd_port, peer_port, api_port) = (free_port(), free_port(), free_port());
    let etcd_url = format!("http://127.0.0.1:{etcd_port}");
    let etcd = Command::new(etcd)
        .args([
            "--data-dir".into(),
            p("etcd").display().to_string(),
            "--listen-client-urls".into(),
            etcd_url.clone(),
            "--advertise-client-urls".into(),
            etcd_url.clone(),
            "--listen-peer-urls".into(),
            format!("http://127.0.0.1:{peer_port}"),
            "--unsafe-no-fsync".into(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start etcd");
    let mut children = vec![etcd];
    let rsa = openssl::rsa::Rsa::generate(2048).expect("RSA key");
    std::fs::write(p("sa.key"), rsa.private_key_to_pem().expect("PEM")).expect("write");
    std::fs::write(p("sa.pub"), rsa.public_key_to_pem().expect("PEM")).expect("write");
    let mut raw = [0u8; 16];
    openssl::rand::rand_bytes(&mut raw).expect("random");
    let token: String = raw.iter().map(|b| format!("{b:02x}")).collect();
    std::fs::write(
        p("tokens.csv"),
        format!("{token},admin,admin-uid,\"system:masters\"\n"),
    )
    .expect("write");
    std::fs::create_dir(p("certs")).expect("mkdir");
    let api = Command::new(apiserver)
        .args([
            format!("--etcd-servers={etcd_url}"),
            "--bind-address=127.0.0.1".into(),
            "--advertise-address=127.0.0.1".into(),
            // A loopback advertise address needs the endpoint reconciler
            // off (as envtest runs it).
            "--endpoint-reconciler-type=none".into(),
            format!("--secure-port={api_port}"),
            format!("--cert-dir={}", p("certs").display()),
            format!("--token-auth-file={}", p("tokens.csv").display()),
            "--authorization-mode=AlwaysAllow".into(),
            "--service-cluster-ip-range=10.0.0.0/24".into(),
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local".into(),
            format!("--service-account-key-file={}", p("sa.pub").display()),
            format!(
                "--service-account-signing-key-file={}",
                p("sa.key").display()
            ),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start kube-apiserver");
    children.push(api);
    let url = format!("https://127.0.0.1:{api_port}");
    let kubeconfig = p("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n    server: {url}\n    insecure-skip-tls-verify: true\nusers:\n- name: admin\n  user:\n    token: {token}\ncontexts:\n- name: test\n  context:\n    cluster: test\n    user: admin\ncurrent-context: test\n"
        ),
    )
    .expect("write kubeconfig");
    Some(ApiServer {
        url,
        token,
        kubeconfig,
        children,
        _dir: dir,
    })
}

impl ApiServer {
    fn client() -> reqwest::blocking::Client {
        reqwest::blocking::Client::builder()
            .danger_accept_invalid_certs(true)
            .timeout(Duration::from_secs(10))
            .build()
            .expect("client")
    }

    /// `method path` with the admin token: the status and the body.
    pub fn call(&self, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
        let m = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut req = Self::client()
            .request(m, format!("{}{path}", self.url))
            .bearer_auth(&self.token);
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_owned());
        }
        match req.send() {
            Ok(r) => {
                let status = r.status().as_u16();
                (status, r.text().unwrap_or_default())
            }
            Err(e) => (0, e.to_string()),
        }
    }

    /// Creates the namespace `name`, waiting (at most 90 s) for the server
    /// to serve.
    pub fn create_namespace(&self, name: &str) {
        let body =
            format!(r#"{{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"{name}"}}}}"#);
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let (status, text) = self.call("POST", "/api/v1/namespaces", Some(&body));
            if status == 201 || status == 409 {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "kube-apiserver did not become ready in 90 s: {status} {text}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The object at `path`, or `None` when it does not exist.
    pub fn get(&self, path: &str) -> Option<serde_json::Value> {
        match self.call("GET", path, None) {
            (200, text) => serde_json::from_str(&text).ok(),
            (404, _) => None,
            (status, text) => panic!("GET {path}: {status} {text}"),
        }
    }

    /// The kubeconfig naming the server and the admin token.
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig
    }
}
