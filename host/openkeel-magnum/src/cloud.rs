//! The cloud as drivers see it (the `cloud` import of contract 1.1): the
//! Keystone endpoint, region, interface and trust the operator configured,
//! for what a driver writes into a cluster. The CA files are read again at
//! every call, so a replaced bundle reaches drivers at their next call.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use driver_host::{CloudAccess, CloudInfo, HostFuture};

use crate::options::Options;

/// The cloud's configuration, from `[keystone_authtoken]`, `[capi_client]`
/// and `[drivers]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConfiguredCloud {
    keystone_url: String,
    region: Option<String>,
    interface: String,
    ca_file: Option<PathBuf>,
    verify: bool,
    cluster_ca_file: Option<PathBuf>,
    cluster_verify_ca: bool,
    last_read: LastRead,
}

/// The last content read of each CA file. A file that cannot be read for a
/// moment (being replaced, a permission changed) must not look like a cloud
/// without a CA: a driver would then write every cluster's Secrets without
/// the bundle.
#[derive(Clone, Debug, Default)]
struct LastRead(Arc<Mutex<HashMap<PathBuf, String>>>);

impl PartialEq for LastRead {
    /// A cache, not configuration: never a difference.
    fn eq(&self, _: &LastRead) -> bool {
        true
    }
}

impl Eq for LastRead {}

impl ConfiguredCloud {
    /// The cloud of `options`: Keystone's public URL
    /// (`[keystone_authtoken]/www_authenticate_uri`, else its `auth_url`),
    /// its region, `[capi_client]/endpoint_type` as an interface name
    /// (`publicURL` is `public`), the CA file of `[capi_client]` else of
    /// `[keystone_authtoken]`, TLS verified unless either says `insecure`,
    /// and `[drivers]/openstack_ca_file` and `verify_ca` for the nodes.
    pub fn from_options(options: &Options) -> ConfiguredCloud {
        let k = &options.keystone_authtoken;
        let c = &options.capi_client;
        let file = |f: &Option<String>| {
            f.as_deref()
                .map(str::trim)
                .filter(|f| !f.is_empty())
                .map(PathBuf::from)
        };
        ConfiguredCloud {
            keystone_url: k
                .www_authenticate_uri
                .clone()
                .or_else(|| k.credentials.auth_url.clone())
                .unwrap_or_default(),
            region: k.region_name.clone().filter(|r| !r.is_empty()),
            interface: interface(&c.client.endpoint_type),
            ca_file: file(&c.tls.ca_file).or_else(|| file(&k.cafile)),
            verify: !c.tls.insecure && !k.insecure,
            cluster_ca_file: file(&Some(options.drivers.openstack_ca_file.clone())),
            cluster_verify_ca: options.drivers.verify_ca,
            last_read: LastRead::default(),
        }
    }
}

/// Keystone's interface name of a catalog endpoint type (`internalURL` is
/// `internal`; a name already without the suffix stays).
fn interface(endpoint_type: &str) -> String {
    let t = endpoint_type.trim();
    let t = t.strip_suffix("URL").unwrap_or(t);
    if t.is_empty() {
        "public".to_string()
    } else {
        t.to_string()
    }
}

impl LastRead {
    /// The content of the CA file `path`. When it cannot be read, or is
    /// empty, the content last read (with a warning); `None` when it never
    /// could be read: a driver then writes no bundle rather than failing
    /// every call.
    async fn bundle(&self, path: &Option<PathBuf>) -> Option<String> {
        let path = path.as_ref()?;
        let read = match tokio::fs::read_to_string(path).await {
            Ok(pem) if pem.trim().is_empty() => Err("the file is empty".to_string()),
            Ok(pem) => Ok(pem),
            Err(e) => Err(e.to_string()),
        };
        let mut last = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match read {
            Ok(pem) => {
                last.insert(path.clone(), pem.clone());
                Some(pem)
            }
            Err(error) => {
                let kept = last.get(Path::new(path)).cloned();
                tracing::warn!(path = %path.display(), %error, keeping_last_read = kept.is_some(),
                    "cannot read a CA bundle for drivers");
                kept
            }
        }
    }
}

impl CloudAccess for ConfiguredCloud {
    fn info(&self) -> HostFuture<'_, CloudInfo> {
        Box::pin(async move {
            CloudInfo {
                keystone_url: self.keystone_url.clone(),
                region: self.region.clone(),
                endpoint_interface: self.interface.clone(),
                ca_bundle: self.last_read.bundle(&self.ca_file).await,
                verify: self.verify,
                cluster_ca_bundle: self.last_read.bundle(&self.cluster_ca_file).await,
                cluster_verify_ca: self.cluster_verify_ca,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(text: &str) -> Options {
        crate::options::from_text(text)
    }

    #[tokio::test]
    async fn the_cloud_comes_from_the_configuration_and_its_files_are_read_at_every_call() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ca = dir.path().join("ca.pem");
        let nodes = dir.path().join("nodes.pem");
        std::fs::write(&ca, "CA ONE").expect("write");
        std::fs::write(&nodes, "NODES ONE").expect("write");
        let cloud = ConfiguredCloud::from_options(&options(&format!(
            "[keystone_authtoken]\nwww_authenticate_uri = https://keystone.example:5000/v3\n\
             auth_url = http://10.0.0.1:5000\nregion_name = RegionTwo\ncafile = /nowhere\n\
             [capi_client]\nendpoint_type = internalURL\nca_file = {}\n\
             [drivers]\nopenstack_ca_file = {}\nverify_ca = false\n",
            ca.display(),
            nodes.display()
        )));
        let info = cloud.info().await;
        assert_eq!(info.keystone_url, "https://keystone.example:5000/v3");
        assert_eq!(info.region.as_deref(), Some("RegionTwo"));
        assert_eq!(info.endpoint_interface, "internal");
        assert_eq!(info.ca_bundle.as_deref(), Some("CA ONE"));
        assert!(info.verify);
        assert_eq!(info.cluster_ca_bundle.as_deref(), Some("NODES ONE"));
        assert!(!info.cluster_verify_ca);
        // A replaced bundle is what the next call reads.
        std::fs::write(&ca, "CA TWO").expect("write");
        assert_eq!(cloud.info().await.ca_bundle.as_deref(), Some("CA TWO"));
        // A bundle gone for a moment, or empty while it is rewritten, is
        // the one last read, not a cloud without a CA.
        std::fs::remove_file(&ca).expect("remove");
        assert_eq!(cloud.info().await.ca_bundle.as_deref(), Some("CA TWO"));
        std::fs::write(&ca, "").expect("write");
        assert_eq!(cloud.info().await.ca_bundle.as_deref(), Some("CA TWO"));
        std::fs::write(&ca, "CA THREE").expect("write");
        assert_eq!(cloud.info().await.ca_bundle.as_deref(), Some("CA THREE"));
    }

    #[tokio::test]
    async fn defaults_and_fallbacks() {
        let cloud = ConfiguredCloud::from_options(&options(
            "[keystone_authtoken]\nauth_url = http://10.0.0.1:5000\ninsecure = true\n",
        ));
        let info = cloud.info().await;
        assert_eq!(info.keystone_url, "http://10.0.0.1:5000");
        assert_eq!(info.endpoint_interface, "public");
        assert_eq!((info.ca_bundle, info.cluster_ca_bundle), (None, None));
        assert!(!info.verify);
        assert!(info.cluster_verify_ca);
    }
}
