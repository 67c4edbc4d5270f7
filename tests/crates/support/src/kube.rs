//! A real kube-apiserver over an etcd, started from the binaries
//! `TEST_ASSET_KUBE_APISERVER` and `TEST_ASSET_ETCD` name
//! (`scripts/ci/kube-apiserver.sh`): a static admin token in
//! `system:masters`, a kubeconfig for a binary under test, and an audit
//! log of every request (metadata only). Stopped when dropped.
//!
//! Only the processes and their files are here; each suite talks to the
//! server with the client it already has (`kube::Client`, `reqwest`) and
//! waits for it to serve as that client can.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::free_port;

/// A running kube-apiserver and its etcd.
pub struct KubeApiServer {
    /// `https://127.0.0.1:<port>`; the certificate is self-signed.
    pub url: String,
    /// The admin's bearer token.
    pub token: String,
    /// etcd, then the API server.
    children: Vec<Child>,
    /// The API server's command line, to start it again.
    apiserver: (String, Vec<String>),
    dir: tempfile::TempDir,
}

impl Drop for KubeApiServer {
    fn drop(&mut self) {
        // The API server first, then its etcd.
        for c in self.children.iter_mut().rev() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn check<T, E: std::fmt::Display>(r: Result<T, E>, what: &str) -> T {
    r.unwrap_or_else(|e| panic!("{what}: {e}"))
}

impl KubeApiServer {
    /// Starts etcd and the API server with `--authorization-mode`
    /// `authorization_mode` (`AlwaysAllow`, or `RBAC`: the admin may still
    /// do anything, and a client impersonating a service account gets that
    /// account's rights). `None`, with a message, when the binaries are not
    /// configured; a failure when `CI=true`. The server is not serving yet
    /// when this returns.
    pub fn start(authorization_mode: &str) -> Option<KubeApiServer> {
        let (Ok(apiserver), Ok(etcd)) = (
            std::env::var("TEST_ASSET_KUBE_APISERVER"),
            std::env::var("TEST_ASSET_ETCD"),
        ) else {
            crate::missing(
                "TEST_ASSET_KUBE_APISERVER and TEST_ASSET_ETCD are not set; \
                 run: eval \"$(scripts/ci/kube-apiserver.sh)\"",
            );
            return None;
        };
        let dir = check(tempfile::tempdir(), "a temporary directory");
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
            .spawn();
        let mut children = vec![check(etcd, "start etcd")];
        // The service-account keys and the admin token.
        let rsa = check(openssl::rsa::Rsa::generate(2048), "an RSA key");
        let write = |name: &str, bytes: &[u8]| check(std::fs::write(p(name), bytes), name);
        write("sa.key", &check(rsa.private_key_to_pem(), "PEM"));
        write("sa.pub", &check(rsa.public_key_to_pem(), "PEM"));
        let mut raw = [0u8; 16];
        check(openssl::rand::rand_bytes(&mut raw), "random bytes");
        let token: String = raw.iter().map(|b| format!("{b:02x}")).collect();
        write(
            "tokens.csv",
            format!("{token},admin,admin-uid,\"system:masters\"\n").as_bytes(),
        );
        check(std::fs::create_dir(p("certs")), "certs/");
        write(
            "audit-policy.yaml",
            b"apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [\"RequestReceived\"]\n\
              rules:\n- level: Metadata\n",
        );
        let args: Vec<String> = vec![
            format!("--etcd-servers={etcd_url}"),
            "--bind-address=127.0.0.1".into(),
            "--advertise-address=127.0.0.1".into(),
            // A loopback advertise address needs the endpoint reconciler
            // off (as envtest runs it).
            "--endpoint-reconciler-type=none".into(),
            format!("--secure-port={api_port}"),
            format!("--cert-dir={}", p("certs").display()),
            format!("--token-auth-file={}", p("tokens.csv").display()),
            format!("--authorization-mode={authorization_mode}"),
            "--service-cluster-ip-range=10.0.0.0/24".into(),
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local".into(),
            format!("--service-account-key-file={}", p("sa.pub").display()),
            format!(
                "--service-account-signing-key-file={}",
                p("sa.key").display()
            ),
            format!("--audit-policy-file={}", p("audit-policy.yaml").display()),
            format!("--audit-log-path={}", p("audit.log").display()),
        ];
        children.push(spawn_apiserver(&apiserver, &args));
        let url = format!("https://127.0.0.1:{api_port}");
        write(
            "kubeconfig",
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n    \
                 server: {url}\n    insecure-skip-tls-verify: true\nusers:\n- name: admin\n  \
                 user:\n    token: {token}\ncontexts:\n- name: test\n  context:\n    \
                 cluster: test\n    user: admin\ncurrent-context: test\n"
            )
            .as_bytes(),
        );
        Some(KubeApiServer {
            url,
            token,
            children,
            apiserver: (apiserver, args),
            dir,
        })
    }

    /// A kubeconfig naming the server and the admin token.
    pub fn kubeconfig(&self) -> PathBuf {
        self.dir.path().join("kubeconfig")
    }

    /// The audit log: one JSON object per line.
    pub fn audit_log(&self) -> PathBuf {
        self.dir.path().join("audit.log")
    }

    /// The directory of its files.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The process id of etcd.
    pub fn etcd_pid(&self) -> u32 {
        self.children[0].id()
    }

    /// Stops the API server; etcd stays.
    pub fn stop_apiserver(&mut self) {
        if let Some(api) = self.children.get_mut(1) {
            let _ = api.kill();
            let _ = api.wait();
        }
    }

    /// Starts the API server again, on the same port, after
    /// [`Self::stop_apiserver`]. It is not serving yet when this returns.
    pub fn start_apiserver(&mut self) {
        let (program, args) = &self.apiserver;
        self.children[1] = spawn_apiserver(program, args);
    }
}

fn spawn_apiserver(program: &str, args: &[String]) -> Child {
    let child = Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    check(child, "start kube-apiserver")
}
