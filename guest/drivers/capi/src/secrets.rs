//! The Secrets of a cluster on the management cluster that are not
//! add-ons (driver-capi.md § 3.2, § 6): the four certificate Secrets with
//! which Cluster API signs the cluster with Magnum's CAs, and the identity
//! Secret `<stack_id>-cloud-config` that CAPO reads, with the application
//! credential it holds: how the credential is named and described, how it
//! is written, and how it is read back from an existing Secret.
//!
//! Everything here is pure: the host's CAs, the cloud's configuration and
//! the credential come in as plain structs.

use std::borrow::Cow;
use std::fmt::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use openkeel_magnum_driver::{Cluster, DriverError};
use serde_json::{Map, Value, json};

use crate::names::{
    ANNOTATION_APP_CRED_USER, ANNOTATION_CLOUD_CA, ANNOTATION_PREVIOUS_APP_CRED, CA_KEY_ADMIN,
    CA_KEY_ETCD, CA_KEY_FRONT_PROXY, CA_KEY_KUBERNETES, LABEL_CLUSTER_NAME, LABEL_CLUSTER_UUID,
    SECRET_TYPE_CLUSTER, SUFFIX_CA, SUFFIX_CLOUD_CONFIG, SUFFIX_ETCD, SUFFIX_FRONT_PROXY,
    SUFFIX_SA,
};

/// The key of `clouds.yaml` in the cloud-config Secret.
pub const KEY_CLOUDS_YAML: &str = "clouds.yaml";
/// The key of the CA bundle in the cloud-config Secret.
pub const KEY_CACERT: &str = "cacert";
/// The one cloud of `clouds.yaml`, which the templates' `identityRef`
/// names.
pub const CLOUD_NAME: &str = "default";
/// The endpoint interface when the cloud names none.
pub const DEFAULT_ENDPOINT_INTERFACE: &str = "public";

/// The letters of a credential suffix.
const SUFFIX_ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";

/// A certificate and its private key (PEM, the key unencrypted PKCS#8),
/// Magnum's CAs of a cluster, the cloud's configuration and an application
/// credential: the SDK's records of contract 1.1, as the host gives them.
pub use openkeel_magnum_driver::cloud::CloudInfo;
pub use openkeel_magnum_driver::openstack::ApplicationCredential as AppCredential;
pub use openkeel_magnum_driver::secrets::{ClusterCas, KeyPair};

/// The endpoint interface a cluster uses, `public` when none is
/// configured.
pub fn interface(cloud: &CloudInfo) -> &str {
    if cloud.endpoint_interface.is_empty() {
        DEFAULT_ENDPOINT_INTERFACE
    } else {
        &cloud.endpoint_interface
    }
}

/// The cloud's region, None when unset or empty.
pub fn region(cloud: &CloudInfo) -> Option<&str> {
    cloud.region.as_deref().filter(|r| !r.is_empty())
}

/// The application credential a rotation replaced, recorded on the
/// cloud-config Secret until the cluster is seen working with the new one
/// (§ 6.2), as `<user_id>/<id>`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreviousCredential {
    /// The owner ("" when the replaced credential's owner was unknown).
    pub user_id: String,
    /// The ID.
    pub id: String,
}

impl PreviousCredential {
    /// The record of `credential`, once replaced.
    pub fn of(credential: &AppCredential) -> PreviousCredential {
        PreviousCredential {
            user_id: credential.user_id.clone(),
            id: credential.id.clone(),
        }
    }

    /// The annotation's value.
    fn annotation(&self) -> String {
        format!("{}/{}", self.user_id, self.id)
    }
}

/// The four certificate Secrets of a cluster (§ 6.1), in the order `-ca`,
/// `-etcd`, `-proxy`, `-sa`: type `cluster.x-k8s.io/secret`, labelled
/// with the Cluster's name, `tls.crt` the certificate (ending in a
/// newline, which Magnum does not store) and `tls.key` the key. Cluster
/// API uses Secrets of these names instead of generating CAs, so Magnum's
/// CAs sign the cluster; `-sa` holds the admin client certificate.
///
/// A pair that is not a PEM certificate with an unencrypted PKCS#8 key
/// fails the operation: kubeadm would fail on the nodes later, out of
/// sight.
pub fn ca_secrets(
    namespace: &str,
    stack_id: &str,
    cas: &ClusterCas,
) -> Result<Vec<Value>, DriverError> {
    [
        (SUFFIX_CA, CA_KEY_KUBERNETES, &cas.kubernetes),
        (SUFFIX_ETCD, CA_KEY_ETCD, &cas.etcd),
        (SUFFIX_FRONT_PROXY, CA_KEY_FRONT_PROXY, &cas.front_proxy),
        (SUFFIX_SA, CA_KEY_ADMIN, &cas.admin),
    ]
    .into_iter()
    .map(|(suffix, which, pair)| {
        check_key_pair(which, pair)?;
        Ok(json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": format!("{stack_id}{suffix}"),
                "namespace": namespace,
                "labels": { LABEL_CLUSTER_NAME: stack_id },
            },
            "type": SECRET_TYPE_CLUSTER,
            "data": {
                "tls.crt": BASE64.encode(with_newline(&pair.cert_pem).as_bytes()),
                "tls.key": BASE64.encode(pair.key_pem.as_bytes()),
            },
        }))
    })
    .collect()
}

/// Refuses a pair whose certificate or key is not of the PEM type kubeadm
/// reads.
// Deviation: the Go driver decrypted the keys itself and checked nothing
// else; here they arrive decrypted, so a key that is not is refused.
fn check_key_pair(which: &str, pair: &KeyPair) -> Result<(), DriverError> {
    let cert = pair
        .cert_pem
        .trim_start()
        .starts_with("-----BEGIN CERTIFICATE-----");
    let key = pair
        .key_pem
        .trim_start()
        .starts_with("-----BEGIN PRIVATE KEY-----");
    if cert && key {
        Ok(())
    } else {
        Err(DriverError::failed(format!(
            "The cluster's {which} certificate is not a PEM certificate with an unencrypted PKCS#8 key."
        )))
    }
}

/// `pem` ending in a newline.
fn with_newline(pem: &str) -> Cow<'_, str> {
    if pem.ends_with('\n') {
        Cow::Borrowed(pem)
    } else {
        Cow::Owned(format!("{pem}\n"))
    }
}

/// The digest of a cloud CA bundle the cloud-config Secret records
/// ([`ANNOTATION_CLOUD_CA`]): FNV-1a (64 bits, hex) of the PEM, `none`
/// without a bundle. It detects a change, it does not authenticate.
pub fn ca_digest(bundle: Option<&str>) -> String {
    let Some(pem) = bundle else {
        return "none".into();
    };
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in pem.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The identity Secret `<stack_id>-cloud-config` that CAPO reads through
/// the templates' `identityRef` (§ 6.3): Opaque, labelled with the cluster
/// UUID, `clouds.yaml` with the one cloud `default` authenticating with
/// `credential`, and `cacert` with the cloud's CA bundle when one is
/// configured. The annotations record the digest of that bundle
/// ([`ca_digest`]), the credential's owner and, after a
/// rotation, the credential it replaced (`previous`); writing the Secret
/// again without `previous` removes that record.
pub fn cloud_config_secret(
    namespace: &str,
    stack_id: &str,
    cluster_uuid: &str,
    cloud: &CloudInfo,
    credential: &AppCredential,
    previous: Option<&PreviousCredential>,
) -> Value {
    let mut annotations = Map::new();
    annotations.insert(
        ANNOTATION_CLOUD_CA.into(),
        json!(ca_digest(cloud.ca_bundle.as_deref())),
    );
    if !credential.user_id.is_empty() {
        annotations.insert(ANNOTATION_APP_CRED_USER.into(), json!(credential.user_id));
    }
    if let Some(previous) = previous {
        annotations.insert(
            ANNOTATION_PREVIOUS_APP_CRED.into(),
            json!(previous.annotation()),
        );
    }
    let mut metadata = json!({
        "name": format!("{stack_id}{SUFFIX_CLOUD_CONFIG}"),
        "namespace": namespace,
        "labels": { LABEL_CLUSTER_UUID: cluster_uuid },
    });
    if !annotations.is_empty() {
        metadata["annotations"] = Value::Object(annotations);
    }
    let mut data = Map::new();
    data.insert(
        KEY_CLOUDS_YAML.into(),
        json!(BASE64.encode(clouds_yaml(cloud, credential))),
    );
    // Deviation: the Go driver always wrote `cacert`, empty without a
    // bundle; an empty `cacert` can keep CAPO from its own `--ca-cert`.
    if let Some(bundle) = &cloud.ca_bundle {
        data.insert(KEY_CACERT.into(), json!(BASE64.encode(bundle)));
    }
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata,
        "type": "Opaque",
        "data": data,
    })
}

/// The `clouds.yaml` of the cloud-config Secret: the cloud `default`,
/// authenticating with the application credential
/// (`v3applicationcredential`) at Keystone's URL, in the cloud's region,
/// through its endpoint interface.
// Deviation: the Go driver wrote the interface `public` whatever the
// deployment's `[capi_client]/endpoint_type`; contract 1.1 gives it.
pub fn clouds_yaml(cloud: &CloudInfo, credential: &AppCredential) -> String {
    let region = region(cloud)
        .map(|r| format!("    region_name: {}\n", yaml_string(r)))
        .unwrap_or_default();
    format!(
        concat!(
            "clouds:\n",
            "  {cloud}:\n",
            "    auth:\n",
            "      application_credential_id: {id}\n",
            "      application_credential_secret: {secret}\n",
            "      auth_url: {auth_url}\n",
            "    auth_type: v3applicationcredential\n",
            "    identity_api_version: 3\n",
            "    interface: {interface}\n",
            "{region}",
            "    verify: {verify}\n",
        ),
        cloud = CLOUD_NAME,
        id = yaml_string(&credential.id),
        secret = yaml_string(&credential.secret),
        auth_url = yaml_string(&cloud.keystone_url),
        interface = yaml_string(interface(cloud)),
        region = region,
        verify = cloud.verify,
    )
}

/// `value` as a YAML string scalar: plain when no YAML reader (1.1 or
/// 1.2) can take it for anything but this string, else double-quoted.
fn yaml_string(value: &str) -> Cow<'_, str> {
    const WORDS: [&str; 9] = ["y", "n", "yes", "no", "on", "off", "true", "false", "null"];
    let plain = value
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic())
        && value.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'/' | b':' | b'@' | b'-')
        })
        && !value.ends_with(':')
        && !WORDS.contains(&value.to_ascii_lowercase().as_str());
    if plain {
        return Cow::Borrowed(value);
    }
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            // What YAML does not print (controls, DEL, C1, non-characters)
            // or takes for a line break (NEL, LS, PS), and the BOM.
            c if (c as u32) < 0x20 || ('\u{7f}'..='\u{9f}').contains(&c) => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    Cow::Owned(out)
}

/// The application credential of an existing cloud-config Secret (as the
/// API server returns it, `data` base64): the ID and secret of the cloud
/// `default` of its `clouds.yaml`, and the owner of its annotation. None
/// when the Secret holds no credential. Secrets written by
/// magnum-cluster-api are read the same way (they have no owner
/// annotation).
pub fn app_credential_from_secret(secret: &Value) -> Option<AppCredential> {
    let raw = secret.get("data")?.get(KEY_CLOUDS_YAML)?.as_str()?;
    let text = String::from_utf8(BASE64.decode(raw).ok()?).ok()?;
    let doc: Value = serde_saphyr::from_str(&text).ok()?;
    let auth = doc.get("clouds")?.get(CLOUD_NAME)?.get("auth")?;
    let field = |key: &str| auth.get(key).and_then(Value::as_str).unwrap_or_default();
    let id = field("application_credential_id");
    if id.is_empty() {
        return None;
    }
    Some(AppCredential {
        id: id.to_string(),
        secret: field("application_credential_secret").to_string(),
        name: String::new(),
        user_id: annotation(secret, ANNOTATION_APP_CRED_USER)
            .unwrap_or_default()
            .to_string(),
    })
}

/// The credential a rotation replaced, recorded on an existing
/// cloud-config Secret; None when there is no record or it names no ID.
// Deviation: the Go driver read a record without `/` as an owner with an
// empty ID, and tried to delete that.
pub fn previous_app_credential(secret: &Value) -> Option<PreviousCredential> {
    let value = annotation(secret, ANNOTATION_PREVIOUS_APP_CRED)?;
    let (user_id, id) = value.split_once('/')?;
    if id.is_empty() {
        return None;
    }
    Some(PreviousCredential {
        user_id: user_id.to_string(),
        id: id.to_string(),
    })
}

/// An annotation of an object.
fn annotation<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object
        .get("metadata")?
        .get("annotations")?
        .get(key)?
        .as_str()
}

/// The suffix of a new application credential's name
/// ([`app_credential_name`](crate::names::app_credential_name)): five
/// letters or digits, one from each byte of `random`, which the caller
/// draws from a random source.
pub fn app_credential_suffix(random: [u8; 5]) -> String {
    random
        .iter()
        .map(|b| char::from(SUFFIX_ALPHABET[usize::from(*b) % SUFFIX_ALPHABET.len()]))
        .collect()
}

/// The description of a cluster's application credential, `Magnum
/// cluster (<name>)`, with the UUID when the cluster has no name.
pub fn app_credential_description(cluster: &Cluster) -> String {
    let name = if cluster.name.is_empty() {
        &cluster.uuid
    } else {
        &cluster.name
    };
    format!("Magnum cluster ({name})")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::fixtures::{STACK_ID, UUID};
    use crate::golden;
    use crate::names::{NAMESPACE, app_credential_name, is_own_app_credential_name};

    const CERT: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----";
    const KEY: &str = "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n";

    fn pair(tag: &str) -> KeyPair {
        KeyPair {
            cert_pem: format!("{CERT}\n{tag}"),
            key_pem: format!("{KEY}{tag}\n"),
            ..KeyPair::default()
        }
    }

    fn test_cas() -> ClusterCas {
        ClusterCas {
            kubernetes: pair("k8s"),
            etcd: pair("etcd"),
            front_proxy: pair("proxy"),
            admin: pair("admin"),
        }
    }

    fn decoded(secret: &Value, key: &str) -> String {
        let raw = secret["data"][key].as_str().expect("a data key");
        String::from_utf8(BASE64.decode(raw).expect("base64")).expect("UTF-8")
    }

    /// The cloud of the Go golden: Keystone at
    /// `https://keystone.example.com/v3`, `RegionOne`, a CA bundle.
    fn test_cloud() -> CloudInfo {
        CloudInfo {
            keystone_url: "https://keystone.example.com/v3".into(),
            region: Some("RegionOne".into()),
            endpoint_interface: "public".into(),
            ca_bundle: Some("-----CA-----\n".into()),
            verify: true,
            cluster_ca_bundle: None,
            cluster_verify_ca: true,
        }
    }

    fn test_credential() -> AppCredential {
        AppCredential {
            id: "ac-1".into(),
            secret: "secret-1".into(),
            name: app_credential_name(UUID, "abcde"),
            user_id: "u1".into(),
        }
    }

    /// Go: TestGoldenObjects "ca secrets": the key material is masked
    /// after its shape is checked.
    #[test]
    fn ca_secrets_match_the_go_golden() {
        let mut secrets = ca_secrets(NAMESPACE, STACK_ID, &test_cas()).unwrap();
        let masked = BASE64.encode("<masked>");
        for (s, which) in secrets.iter_mut().zip(["k8s", "etcd", "proxy", "admin"]) {
            let crt = decoded(s, "tls.crt");
            assert!(crt.starts_with("-----BEGIN CERTIFICATE-----"), "{crt}");
            assert!(
                crt.ends_with(&format!("\n{which}\n")),
                "tls.crt gets a newline: {crt:?}"
            );
            assert_eq!(decoded(s, "tls.key"), format!("{KEY}{which}\n"));
            s["data"] = json!({ "tls.crt": masked, "tls.key": masked });
        }
        golden::assert_matches(&Value::Array(secrets), "secrets-ca.yaml");
    }

    #[test]
    fn a_certificate_keeps_its_newline() {
        let mut cas = test_cas();
        cas.kubernetes.cert_pem = format!("{CERT}\n");
        let secrets = ca_secrets(NAMESPACE, STACK_ID, &cas).unwrap();
        assert_eq!(decoded(&secrets[0], "tls.crt"), format!("{CERT}\n"));
    }

    #[test]
    fn an_encrypted_or_missing_key_fails() {
        for (name, edit) in [
            (
                "encrypted key",
                (|c: &mut ClusterCas| {
                    c.etcd.key_pem = "-----BEGIN ENCRYPTED PRIVATE KEY-----\nx\n".into();
                }) as fn(&mut ClusterCas),
            ),
            ("no certificate", |c| c.admin.cert_pem = String::new()),
            ("PKCS#1 key", |c| {
                c.front_proxy.key_pem = "-----BEGIN RSA PRIVATE KEY-----\nx\n".into();
            }),
        ] {
            let mut cas = test_cas();
            edit(&mut cas);
            let err = ca_secrets(NAMESPACE, STACK_ID, &cas).unwrap_err();
            assert!(matches!(err, DriverError::Failed(_)), "{name}: {err}");
        }
        let mut cas = test_cas();
        cas.etcd.key_pem = "-----BEGIN ENCRYPTED PRIVATE KEY-----\n".into();
        assert_eq!(
            ca_secrets(NAMESPACE, STACK_ID, &cas)
                .unwrap_err()
                .to_string(),
            "The cluster's etcd certificate is not a PEM certificate with an unencrypted PKCS#8 key."
        );
    }

    #[test]
    fn keys_are_never_shown() {
        let shown = format!("{:?} {:?}", test_cas(), test_credential());
        assert!(
            !shown.contains("MIIE") && !shown.contains("secret-1"),
            "{shown}"
        );
        assert!(shown.contains("ac-1"), "{shown}");
    }

    /// The view the Go test rendered: metadata, type and the data as text.
    fn view(secret: &Value) -> Value {
        let mut string_data = Map::new();
        for key in secret["data"].as_object().expect("data").keys() {
            string_data.insert(key.clone(), json!(decoded(secret, key)));
        }
        json!({ "metadata": secret["metadata"], "type": secret["type"], "stringData": string_data })
    }

    /// Go: TestGoldenObjects "cloud-config secret".
    #[test]
    fn cloud_config_secret_matches_the_go_golden() {
        let s = cloud_config_secret(
            NAMESPACE,
            STACK_ID,
            UUID,
            &test_cloud(),
            &test_credential(),
            None,
        );
        assert_eq!(
            (s["apiVersion"].as_str(), s["kind"].as_str()),
            (Some("v1"), Some("Secret"))
        );
        // Deviation: the digest of the CA bundle is recorded (the Go
        // driver never refreshed the bundle).
        golden::assert_matches_with(&view(&s), "secret-cloud-config.yaml", |want| {
            want["metadata"]["annotations"][ANNOTATION_CLOUD_CA] =
                json!(ca_digest(Some("-----CA-----\n")));
        });
        // The text itself is the Go driver's, byte for byte.
        let want = golden::load("secret-cloud-config.yaml");
        assert_eq!(
            json!(decoded(&s, KEY_CLOUDS_YAML)),
            want["stringData"]["clouds.yaml"]
        );

        let back = app_credential_from_secret(&s).expect("a credential");
        assert_eq!(
            back,
            AppCredential {
                name: String::new(),
                ..test_credential()
            }
        );
        assert_eq!(previous_app_credential(&s), None);
    }

    #[test]
    fn the_cloud_info_of_contract_1_1_is_used() {
        let cloud = CloudInfo {
            endpoint_interface: "internal".into(),
            region: Some(String::new()),
            ca_bundle: None,
            verify: false,
            ..test_cloud()
        };
        let s = cloud_config_secret(NAMESPACE, STACK_ID, UUID, &cloud, &test_credential(), None);
        let doc: Value = serde_saphyr::from_str(&decoded(&s, KEY_CLOUDS_YAML)).unwrap();
        let c = &doc["clouds"]["default"];
        assert_eq!(c["interface"], "internal");
        assert_eq!(c["verify"], false);
        assert_eq!(c["identity_api_version"], 3);
        assert!(c.get("region_name").is_none(), "{c}");
        assert!(s["data"].get(KEY_CACERT).is_none(), "no bundle, no cacert");
        // An interface left empty is `public`, as the Go driver's default.
        let bare = CloudInfo {
            endpoint_interface: String::new(),
            ..test_cloud()
        };
        assert!(clouds_yaml(&bare, &test_credential()).contains("    interface: public\n"));
    }

    #[test]
    fn any_credential_text_survives_clouds_yaml() {
        for text in [
            "",
            "yes",
            "No",
            "null",
            "~",
            "123",
            "0x1F",
            "1e3",
            "0644",
            ".inf",
            "a: b",
            "a #b",
            "#x",
            "- x",
            "x:",
            "\"q\"",
            "'s'",
            "tab\there",
            "line\nbreak",
            "ünïcode",
            "[x]",
            "{x}",
            "&a",
            "*a",
            "!tag",
            "%x",
            "@x",
            "`x",
            "a,b",
            "  padded ",
            "\\back",
            "\u{7f}",
            "Mu2j_Q-9x~vL.z",
        ] {
            let cred = AppCredential {
                id: format!("id{text}"),
                secret: text.to_string(),
                user_id: "u".into(),
                ..AppCredential::default()
            };
            let cloud = CloudInfo {
                keystone_url: text.into(),
                region: Some(text.into()),
                ..test_cloud()
            };
            let yaml = clouds_yaml(&cloud, &cred);
            let doc: Value =
                serde_saphyr::from_str(&yaml).unwrap_or_else(|e| panic!("{text:?}: {e}\n{yaml}"));
            let c = &doc["clouds"]["default"];
            assert_eq!(
                c["auth"]["application_credential_secret"],
                json!(text),
                "{yaml}"
            );
            assert_eq!(c["auth"]["auth_url"], json!(text), "{yaml}");
            let s = cloud_config_secret(NAMESPACE, STACK_ID, UUID, &cloud, &cred, None);
            assert_eq!(
                app_credential_from_secret(&s).map(|c| c.secret),
                Some(text.to_string())
            );
        }
    }

    #[test]
    fn the_ca_digest_follows_the_bundle() {
        let a = ca_digest(Some("-----CA-----\n"));
        assert_eq!(a.len(), 16);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(a, ca_digest(Some("-----CA-----\n")));
        assert_ne!(a, ca_digest(Some("-----CA2-----\n")));
        assert_eq!(ca_digest(None), "none");
        // FNV-1a's offset basis: the digest of nothing.
        assert_eq!(ca_digest(Some("")), "cbf29ce484222325");
    }

    #[test]
    fn a_rotation_records_the_previous_credential() {
        let old = AppCredential {
            id: "ac-0".into(),
            user_id: "u0".into(),
            ..AppCredential::default()
        };
        let previous = PreviousCredential::of(&old);
        let s = cloud_config_secret(
            NAMESPACE,
            STACK_ID,
            UUID,
            &test_cloud(),
            &test_credential(),
            Some(&previous),
        );
        assert_eq!(
            s["metadata"]["annotations"],
            json!({
                "magnum.openstack.org/application-credential-user-id": "u1",
                "magnum.openstack.org/cloud-ca-digest": ca_digest(Some("-----CA-----\n")),
                "magnum.openstack.org/previous-application-credential-id": "u0/ac-0",
            })
        );
        assert_eq!(previous_app_credential(&s), Some(previous));
        // An owner that was not known is recorded empty.
        let unknown = PreviousCredential {
            user_id: String::new(),
            id: "ac-0".into(),
        };
        let s = cloud_config_secret(
            NAMESPACE,
            STACK_ID,
            UUID,
            &test_cloud(),
            &test_credential(),
            Some(&unknown),
        );
        assert_eq!(previous_app_credential(&s), Some(unknown));
    }

    #[test]
    fn what_is_not_a_credential_is_not_read() {
        let with = |metadata: Value, clouds: &str| json!({ "metadata": metadata, "data": { "clouds.yaml": BASE64.encode(clouds) } });
        for (name, secret) in [
            ("no data", json!({ "metadata": {} })),
            ("not base64", json!({ "data": { "clouds.yaml": "%%%" } })),
            ("not YAML", with(json!({}), "clouds: [\n")),
            (
                "no default cloud",
                with(
                    json!({}),
                    "clouds:\n  other:\n    auth:\n      application_credential_id: x\n",
                ),
            ),
            (
                "no ID",
                with(
                    json!({}),
                    "clouds:\n  default:\n    auth:\n      auth_url: x\n",
                ),
            ),
            (
                "empty ID",
                with(
                    json!({}),
                    "clouds:\n  default:\n    auth:\n      application_credential_id: ''\n",
                ),
            ),
        ] {
            assert_eq!(app_credential_from_secret(&secret), None, "{name}");
        }
        // magnum-cluster-api's Secret: no auth_type, no owner annotation.
        let mcapi = with(
            json!({ "name": "kube-abcde-cloud-config" }),
            "clouds:\n  default:\n    auth:\n      application_credential_id: 0a1b\n      application_credential_secret: s\n      auth_url: https://k/v3\n    endpoint_type: public\n    identity_api_version: 3\n    verify: true\n",
        );
        assert_eq!(
            app_credential_from_secret(&mcapi),
            Some(AppCredential {
                id: "0a1b".into(),
                secret: "s".into(),
                ..AppCredential::default()
            })
        );
        for bad in ["", "ac-0", "u0/"] {
            let s = json!({ "metadata": { "annotations": { ANNOTATION_PREVIOUS_APP_CRED: bad } } });
            assert_eq!(previous_app_credential(&s), None, "{bad:?}");
        }
    }

    #[test]
    fn credential_names_and_descriptions() {
        let suffix = app_credential_suffix([0, 25, 26, 35, 36 + 7]);
        assert_eq!(suffix, "az09h");
        assert_eq!(app_credential_suffix([255; 5]), "ddddd");
        let name = app_credential_name(UUID, &suffix);
        assert_eq!(name, format!("magnum-{UUID}-az09h"));
        assert!(is_own_app_credential_name(UUID, &name));
        let mut cluster = Cluster {
            uuid: UUID.into(),
            name: "demo".into(),
            ..Cluster::default()
        };
        assert_eq!(
            app_credential_description(&cluster),
            "Magnum cluster (demo)"
        );
        cluster.name.clear();
        assert_eq!(
            app_credential_description(&cluster),
            format!("Magnum cluster ({UUID})")
        );
    }
}
