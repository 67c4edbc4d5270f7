//! `/v1/certificates` (magnum/api/controllers/v1/certificate.py): the CA of
//! a cluster (#27), the signing of a CSR with it (#28) and the rotation of
//! the cluster's CAs (#29).

use axum::response::Response;
use http::StatusCode;
use magnum_domain::models::Cluster;
use magnum_domain::{MagnumError, catalogue};
use python_semantics::decode::decode_ordered;
use python_semantics::python::str_of;
use python_semantics::value::PyValue;
use serde_json::{Map, Value, json};

use super::clusters::{authorized_cluster, cluster_target};
use super::errors::json_response;
use super::versions::Link;
use super::{ApiError, Call, Services};

/// The attributes of the `Certificate` body type in WSME's order: the
/// class's declarations, then those of `APIBase`.
const ATTRIBUTES: [&str; 7] = [
    "cluster_uuid",
    "links",
    "csr",
    "pem",
    "ca_cert_type",
    "created_at",
    "updated_at",
];

/// The `self` and `bookmark` links of a cluster's certificate.
fn links(base: &str, cluster_uuid: &str) -> Value {
    json!(Link::pair(base, "certificates", cluster_uuid))
}

/// GET /v1/certificates/{cluster_ident} (#27): the lookup in the caller's
/// project (404/409; no all-projects rule, so admins get 404 for other
/// projects), `certificate:get` on the cluster, then the CA PEM that
/// `ca_cert_type` chooses.
pub(crate) async fn get_one(s: Services, call: Call<String>) -> Result<Response, ApiError> {
    let cluster = authorized_cluster(&s, &call.ctx, &call.path, "certificate:get").await?;
    let pem = s
        .conductor
        .get_ca_certificate(&cluster, call.query.text("ca_cert_type"))
        .await?;
    // WSME writes the attributes sorted by name.
    let body = json!({
        "cluster_uuid": cluster.uuid,
        "links": links(&call.base_url, &cluster.uuid),
        "pem": pem,
    });
    Ok(json_response(StatusCode::OK, &body))
}

/// A parsed POST body.
struct SignRequest {
    cluster: Option<Cluster>,
    csr: Option<String>,
    /// The string `ca_cert_type`, when it is one.
    ca_cert_type: Option<String>,
    /// The attribute as it is answered: absent, `null` or the string.
    ca_cert_type_answer: Option<Value>,
}

/// The `Certificate` body built as WSME builds it: unknown attributes
/// first, then each attribute in declaration order, the cluster being looked
/// up while `cluster_uuid` is set (not found → 400).
async fn parse_body(s: &Services, call: &Call) -> Result<SignRequest, ApiError> {
    let raw = call.require_body()?;
    let doc = decode_ordered(raw).map_err(|_| MagnumError::invalid_json_body())?;
    let PyValue::Dict(obj) = doc else {
        return Err(MagnumError::request_not_a_dict().into());
    };
    let mut unknown: Vec<String> = Vec::new();
    for k in obj.keys() {
        let name = str_of(k);
        if !ATTRIBUTES.contains(&name.as_str()) && !unknown.contains(&name) {
            unknown.push(name);
        }
    }
    if !unknown.is_empty() {
        let names: Vec<&str> = unknown.iter().map(String::as_str).collect();
        return Err(MagnumError::unknown_attribute("certificate", &names).into());
    }
    let mut req = SignRequest {
        cluster: None,
        csr: None,
        ca_cert_type: None,
        ca_cert_type_answer: None,
    };
    for attr in ATTRIBUTES {
        let Some(v) = obj.get(attr) else { continue };
        if v.is_none() {
            if attr == "ca_cert_type" {
                req.ca_cert_type_answer = Some(Value::Null);
            }
            continue;
        }
        match attr {
            "cluster_uuid" => {
                // Magnum: certificate.py:61 — the setter looks the cluster
                // up; WSME hands it whatever the body holds.
                let ident = match v.as_str() {
                    Some("") => continue, // falsy: the attribute stays unset
                    Some(s) => s.to_owned(),
                    None => str_of(v),
                };
                let cluster =
                    s.conductor
                        .get_cluster(&call.ctx, &ident)
                        .await
                        .map_err(|e| match e {
                            crate::conductor::Error::Client(m)
                                if m.is(&catalogue::CLUSTER_NOT_FOUND) =>
                            {
                                ApiError::Magnum(m.with_status(400))
                            }
                            other => other.into(),
                        })?;
                req.cluster = Some(cluster);
            }
            "links" | "created_at" | "updated_at" => {
                return Err(MagnumError::read_only_field(attr, v).into());
            }
            "csr" => match v.as_str() {
                Some("") => return Err(MagnumError::too_short(attr, "", 1).into()),
                Some(csr) => req.csr = Some(csr.to_owned()),
                None => return Err(MagnumError::not_a_string(attr, v).into()),
            },
            "pem" if v.as_str().is_none() => {
                return Err(MagnumError::not_a_string(attr, v).into());
            }
            "ca_cert_type" => match v.as_str() {
                Some(t) => {
                    req.ca_cert_type = Some(t.to_owned());
                    req.ca_cert_type_answer = Some(json!(t));
                }
                None => return Err(MagnumError::not_a_string(attr, v).into()),
            },
            _ => {}
        }
    }
    Ok(req)
}

/// POST /v1/certificates (#28): the body (with the cluster lookup),
/// `certificate:create` on the cluster, then the CSR signed by the CA
/// `ca_cert_type` chooses; 201.
pub(crate) async fn post(s: Services, call: Call) -> Result<Response, ApiError> {
    let req = parse_body(&s, &call).await?;
    let Some(cluster) = req.cluster else {
        // Deviation: Magnum answers a body without cluster_uuid with a 500
        // (the lookup of an unset value fails); we answer 400.
        return Err(MagnumError::mandatory_field_missing("cluster_uuid").into());
    };
    super::policy::enforce(
        &s.enforcer,
        &call.ctx,
        "certificate:create",
        Some(&cluster_target(&cluster)),
    )?;
    let Some(csr) = req.csr else {
        // Deviation: without csr Magnum's conductor fails with a 500 (the
        // object field is unset); we answer 400.
        return Err(MagnumError::mandatory_field_missing("csr").into());
    };
    let pem = s
        .conductor
        .sign_certificate(&cluster, &csr, req.ca_cert_type.as_deref())
        .await?;
    // WSME writes the attributes sorted by name.
    let mut body = Map::new();
    if let Some(t) = req.ca_cert_type_answer {
        body.insert("ca_cert_type".into(), t);
    }
    body.insert("cluster_uuid".into(), json!(cluster.uuid));
    body.insert("csr".into(), json!(csr));
    body.insert("links".into(), links(&call.base_url, &cluster.uuid));
    body.insert("pem".into(), json!(pem));
    Ok(json_response(StatusCode::CREATED, &body))
}

/// PATCH /v1/certificates/{cluster_ident} (#29): the lookup,
/// `certificate:rotate_ca` on the cluster, then the CA rotation; 202 with
/// the cluster's UUID.
pub(crate) async fn patch(s: Services, call: Call<String>) -> Result<Response, ApiError> {
    let cluster = authorized_cluster(&s, &call.ctx, &call.path, "certificate:rotate_ca").await?;
    let rotated = s.conductor.rotate_ca(&call.ctx, &cluster).await?;
    Ok(json_response(
        StatusCode::ACCEPTED,
        &json!({"uuid": rotated.uuid}),
    ))
}

/// Transcripts of the three routes over clusters inserted in the database
/// (every case of the Go `TestGetCertificate`, `TestPostCertificate`,
/// `TestPatchCertificate` and `TestDeleteClusterCertificatesRemovesRows`).
#[cfg(test)]
mod tests {
    use magnum_domain::Status;
    use magnum_domain::models::Cluster;
    use openssl::nid::Nid;
    use serde_json::{Value, json};

    use openssl::dsa::Dsa;
    use openssl::ec::{EcGroup, EcKey};
    use openssl::hash::MessageDigest;
    use openssl::pkey::{PKey, Private};
    use openssl::stack::Stack;
    use openssl::x509::extension::BasicConstraints;
    use openssl::x509::{X509NameBuilder, X509ReqBuilder};

    use crate::conductor::certificate_test_support::*;
    use crate::fixture::{detail, expect};
    use crate::testing::{Answer, TestApp};

    const CREATOR: &[&str] = &[
        "X-Project-Id: p1",
        "X-User-Id: u1",
        "X-Roles: member,reader",
    ];
    const READER: &[&str] = &["X-Project-Id: p1", "X-User-Id: u1", "X-Roles: reader"];
    const PEER: &[&str] = &[
        "X-Project-Id: p1",
        "X-User-Id: u9",
        "X-Roles: member,reader",
    ];
    const OTHER: &[&str] = &["X-Project-Id: p2", "X-User-Id: u2", "X-Roles: member"];
    const OTHER_ADMIN: &[&str] = &["X-Project-Id: p2", "X-User-Id: a", "X-Roles: admin"];
    const ADMIN: &[&str] = &["X-Project-Id: p1", "X-User-Id: uadmin", "X-Roles: admin"];

    /// The application with cluster `c1` of p1/u1 (CREATE_COMPLETE) and
    /// its certificates.
    async fn app() -> (TestApp, Cluster) {
        let app = TestApp::new().await;
        let cl =
            cluster_with_certificates(&app.t.conductor, "c1", Status::CreateComplete, false, None)
                .await;
        (app, cl)
    }

    async fn stored_ca(app: &TestApp, cl: &Cluster, ca_type: Option<&str>) -> String {
        app.t
            .conductor
            .get_ca_certificate(cl, ca_type)
            .await
            .expect("the stored CA")
    }

    async fn post(app: &TestApp, who: &[&str], body: &Value) -> Answer {
        app.call("POST /v1/certificates", &body.to_string(), who)
            .await
    }

    #[tokio::test]
    async fn get_serves_the_ca_ca_cert_type_chooses() {
        let (app, cl) = app().await;
        let u = &cl.uuid;
        for (query, ca_type) in [
            ("", None),
            ("?ca_cert_type=kubernetes", None),
            ("?ca_cert_type=whatever", None),
            ("?ca_cert_type=etcd", Some("etcd")),
            ("?ca_cert_type=front_proxy", Some("front-proxy")),
            ("?ca_cert_type=front-proxy", Some("front-proxy")),
        ] {
            let a = app
                .call(&format!("GET /v1/certificates/{u}{query}"), "", READER)
                .await;
            expect(&a, 200, "");
            assert_eq!(
                a.json(),
                json!({
                    "cluster_uuid": u,
                    "links": [
                        {"href": format!("http://localhost/v1/certificates/{u}"), "rel": "self"},
                        {"href": format!("http://localhost/certificates/{u}"), "rel": "bookmark"},
                    ],
                    "pem": stored_ca(&app, &cl, ca_type).await,
                }),
                "{query}"
            );
        }
        let cas = [
            stored_ca(&app, &cl, None).await,
            stored_ca(&app, &cl, Some("etcd")).await,
            stored_ca(&app, &cl, Some("front-proxy")).await,
        ];
        assert!(cas[0] != cas[1] && cas[1] != cas[2], "three CAs");
    }

    #[tokio::test]
    async fn get_lookup_and_policy() {
        let (app, cl) = app().await;
        let path = format!("GET /v1/certificates/{}", cl.uuid);
        // By name.
        let a = app.call("GET /v1/certificates/c1", "", CREATOR).await;
        expect(&a, 200, "");
        assert_eq!(a.json()["cluster_uuid"], json!(cl.uuid));
        expect(
            &app.call("GET /v1/certificates/nope", "", CREATOR).await,
            404,
            "Cluster nope could not be found.",
        );
        // Another project's cluster is not found, even for an admin.
        expect(&app.call(&path, "", OTHER).await, 404, "");
        expect(&app.call(&path, "", OTHER_ADMIN).await, 404, "");
        expect(
            &app.call(&path, "", PEER).await,
            403,
            "Policy doesn't allow certificate:get to be performed.",
        );
        expect(&app.call(&path, "", ADMIN).await, 200, "");
        expect(
            &app.call("GET /v1/certificates/detail", "", CREATOR).await,
            404,
            "Cluster detail could not be found.",
        );
    }

    #[tokio::test]
    async fn post_signs_the_csr_with_the_ca_ca_cert_type_chooses() {
        let (app, cl) = app().await;
        for ca_type in [
            None,
            Some("kubernetes"),
            Some("etcd"),
            Some("front_proxy"),
            Some("front-proxy"),
        ] {
            let csr = csr("system:node:n1");
            let mut body = json!({"cluster_uuid": "c1", "csr": csr});
            if let Some(t) = ca_type {
                body["ca_cert_type"] = json!(t);
            }
            let a = post(&app, CREATOR, &body).await;
            expect(&a, 201, "");
            let got = a.json();
            assert_eq!(got["cluster_uuid"], json!(cl.uuid));
            assert_eq!(got["csr"], json!(csr));
            assert_eq!(
                got.get("ca_cert_type").cloned(),
                ca_type.map(|t| json!(t)),
                "ca_cert_type is answered when sent"
            );
            assert_eq!(
                got["links"][0]["href"],
                json!(format!("http://localhost/v1/certificates/{}", cl.uuid))
            );
            let pem = got["pem"].as_str().unwrap_or_default();
            assert!(!pem.ends_with('\n'), "no trailing newline");
            let cert = verify(pem, &stored_ca(&app, &cl, ca_type).await);
            assert_eq!(
                name_entry(cert.subject_name(), Nid::COMMONNAME),
                "system:node:n1"
            );
            assert_eq!(name_entry(cert.issuer_name(), Nid::COMMONNAME), "c1");
        }
        // ca_cert_type null is answered as null and chooses the Kubernetes CA.
        let a = post(
            &app,
            CREATOR,
            &json!({"cluster_uuid": cl.uuid, "csr": csr("n2"), "ca_cert_type": null}),
        )
        .await;
        expect(&a, 201, "");
        assert_eq!(a.json().get("ca_cert_type"), Some(&Value::Null));
        verify(
            a.json()["pem"].as_str().unwrap_or_default(),
            &stored_ca(&app, &cl, None).await,
        );
    }

    #[tokio::test]
    async fn post_refusals() {
        let (app, cl) = app().await;
        let u = &cl.uuid;
        expect(
            &post(
                &app,
                CREATOR,
                &json!({"cluster_uuid": u, "csr": "fake-csr"}),
            )
            .await,
            400,
            "Received invalid csr b'fake-csr'.",
        );
        let a = post(
            &app,
            CREATOR,
            &json!({"cluster_uuid": u, "csr": corrupt(&csr("x"))}),
        )
        .await;
        expect(&a, 400, "");
        assert!(
            detail(&a).starts_with("Received invalid csr "),
            "{}",
            detail(&a)
        );
        expect(
            &post(
                &app,
                CREATOR,
                &json!({"cluster_uuid": "not_found", "csr": "x"}),
            )
            .await,
            400,
            "Cluster not_found could not be found.",
        );
        expect(
            &post(&app, PEER, &json!({"cluster_uuid": u, "csr": "x"})).await,
            403,
            "Policy doesn't allow certificate:create to be performed.",
        );
        // The cluster lookup comes before the policy.
        expect(
            &post(&app, PEER, &json!({"cluster_uuid": "nope", "csr": "x"})).await,
            400,
            "Cluster nope could not be found.",
        );
        expect(
            &post(
                &app,
                CREATOR,
                &json!({"cluster_uuid": u, "csr": "x", "foo": 1}),
            )
            .await,
            400,
            "Unknown attribute for argument certificate: foo",
        );
        expect(
            &post(
                &app,
                CREATOR,
                &json!({"cluster_uuid": u, "csr": "x", "links": "l"}),
            )
            .await,
            400,
            "Invalid input for field/attribute links. Value: 'l'. Cannot set read only field.",
        );
        expect(
            &post(&app, CREATOR, &json!({"cluster_uuid": u, "csr": ""})).await,
            400,
            "Invalid input for field/attribute csr. Value: ''. Value should have a minimum character requirement of 1",
        );
        expect(
            &post(&app, CREATOR, &json!({"csr": "x"})).await,
            400,
            "Invalid input for field/attribute cluster_uuid. Value: 'None'. Mandatory field missing.",
        );
        expect(
            &post(&app, CREATOR, &json!({"cluster_uuid": u})).await,
            400,
            "Invalid input for field/attribute csr. Value: 'None'. Mandatory field missing.",
        );
        expect(
            &app.call("POST /v1/certificates", "", CREATOR).await,
            400,
            "Missing argument: \"certificate\"",
        );
    }

    /// The exchange of `openstack coe cluster config`: python-magnumclient
    /// makes an RSA key and a CSR for `CN=admin, O=system:masters` with no
    /// extension, posts it, and writes the answer with the CA of GET into
    /// the kubeconfig. The certificate verifies against that CA, keeps the
    /// subject, carries only a subjectKeyIdentifier and is valid for
    /// `term_of_validity` (1825) days plus the day Magnum adds.
    #[tokio::test]
    async fn the_cluster_config_exchange_gives_an_admin_certificate_of_the_ca() {
        use openssl::rsa::Rsa;

        let (app, cl) = app().await;
        let key = PKey::from_rsa(Rsa::generate(2048).expect("RSA")).expect("key");
        let mut name = X509NameBuilder::new().expect("name");
        name.append_entry_by_nid(Nid::COMMONNAME, "admin")
            .expect("CN");
        name.append_entry_by_nid(Nid::ORGANIZATIONNAME, "system:masters")
            .expect("O");
        let mut b = X509ReqBuilder::new().expect("request");
        b.set_subject_name(&name.build()).expect("subject");
        b.set_pubkey(&key).expect("public key");
        b.sign(&key, MessageDigest::sha256()).expect("sign");
        let csr = String::from_utf8(b.build().to_pem().expect("PEM")).expect("ASCII");
        let a = post(&app, CREATOR, &json!({"cluster_uuid": cl.uuid, "csr": csr})).await;
        expect(&a, 201, "");
        let pem = a.json()["pem"].as_str().unwrap_or_default().to_owned();
        let ca = app
            .call(&format!("GET /v1/certificates/{}", cl.uuid), "", CREATOR)
            .await
            .json()["pem"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let cert = verify(&pem, &ca);
        assert_eq!(name_entry(cert.subject_name(), Nid::COMMONNAME), "admin");
        assert_eq!(
            name_entry(cert.subject_name(), Nid::ORGANIZATIONNAME),
            "system:masters"
        );
        let der = cert.to_der().expect("DER");
        let (_, parsed) = x509_parser::parse_x509_certificate(&der).expect("parse");
        let exts: Vec<String> = parsed
            .extensions()
            .iter()
            .map(|e| e.oid.to_id_string())
            .collect();
        assert_eq!(exts, ["2.5.29.14"], "only a subjectKeyIdentifier");
        let v = parsed.validity();
        let secs = v.not_after.timestamp() - v.not_before.timestamp();
        assert!(
            (1825 * 86_400..=1827 * 86_400).contains(&secs),
            "validity {secs} s"
        );
        let ca_cert = openssl::x509::X509::from_pem(ca.as_bytes()).expect("CA");
        assert_eq!(
            cert.issuer_name().to_der().expect("DER"),
            ca_cert.subject_name().to_der().expect("DER"),
            "issued by the cluster's CA"
        );
    }

    #[tokio::test]
    async fn hostile_csrs_get_a_400_and_never_a_signed_ca() {
        let (app, cl) = app().await;
        let huge = format!(
            "-----BEGIN CERTIFICATE REQUEST-----\n{}\n-----END CERTIFICATE REQUEST-----\n",
            "A".repeat(200_000)
        );
        let dsa = PKey::from_dsa(Dsa::generate(2048).expect("DSA")).expect("key");
        let ed448 = PKey::generate_ed448().expect("Ed448 key");
        for (bad, kind) in [
            (huge, "InvalidCsr"),
            ("\u{0}\u{1}garbage".to_owned(), "InvalidCsr"),
            (corrupt(&csr("x")), "InvalidCsr"),
            (request(&dsa, None), "InvalidCsr"),
            (request(&ed448, None), "InvalidCsr"),
            (request(&ec_key(), Some(true)), "CertificateValidationError"),
            (unknown_critical_extension(), "CertificateValidationError"),
        ] {
            let a = post(&app, CREATOR, &json!({"cluster_uuid": cl.uuid, "csr": bad})).await;
            assert_eq!(
                a.status.as_u16(),
                400,
                "{}",
                a.text().chars().take(200).collect::<String>()
            );
            let detail = a.json()["errors"][0]["detail"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            assert!(
                detail.starts_with(detail_prefix(kind)),
                "{kind}: {}",
                detail.chars().take(200).collect::<String>()
            );
            assert!(a.json().get("pem").is_none());
        }
        // A non-critical CA:TRUE request is signed, as Magnum does, with
        // CA:FALSE.
        let a = post(
            &app,
            CREATOR,
            &json!({"cluster_uuid": cl.uuid, "csr": request(&ec_key(), Some(false))}),
        )
        .await;
        expect(&a, 201, "");
        let pem = a.json()["pem"].as_str().unwrap_or_default().to_owned();
        let der = openssl::x509::X509::from_pem(pem.as_bytes())
            .expect("PEM")
            .to_der()
            .expect("DER");
        let (_, parsed) = x509_parser::parse_x509_certificate(&der).expect("parse");
        assert!(!parsed.is_ca(), "never a CA");
    }

    /// How Magnum's message of a 400 of `kind` starts.
    fn detail_prefix(kind: &str) -> &'static str {
        match kind {
            "InvalidCsr" => "Received invalid csr ",
            _ => "Extension '",
        }
    }

    /// A CSR with an EC key and a critical extension Magnum does not know.
    fn unknown_critical_extension() -> String {
        use openssl::asn1::{Asn1Object, Asn1OctetString};
        use openssl::x509::X509Extension;

        let key = ec_key();
        let mut name = X509NameBuilder::new().expect("name");
        name.append_entry_by_nid(Nid::COMMONNAME, "hostile")
            .expect("CN");
        let mut b = X509ReqBuilder::new().expect("request");
        b.set_subject_name(&name.build()).expect("subject");
        b.set_pubkey(&key).expect("public key");
        let oid = Asn1Object::from_str("1.3.6.1.4.1.99999.7").expect("OID");
        let value = Asn1OctetString::new_from_bytes(&[0x0c, 0x01, b'x']).expect("value");
        let ext = X509Extension::new_from_der(&oid, true, &value).expect("extension");
        let mut exts = Stack::new().expect("stack");
        exts.push(ext).expect("push");
        b.add_extensions(&exts).expect("extensions");
        b.sign(&key, MessageDigest::sha256()).expect("sign");
        String::from_utf8(b.build().to_pem().expect("PEM")).expect("ASCII")
    }

    fn ec_key() -> PKey<Private> {
        let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).expect("P-256");
        PKey::from_ec_key(EcKey::generate(&group).expect("EC key")).expect("key")
    }

    /// A CSR for `CN=hostile` with `key`, asking for CA:TRUE (critical or
    /// not) when `ca` is set.
    fn request(key: &PKey<Private>, ca: Option<bool>) -> String {
        let mut name = X509NameBuilder::new().expect("name");
        name.append_entry_by_nid(Nid::COMMONNAME, "hostile")
            .expect("CN");
        let mut b = X509ReqBuilder::new().expect("request");
        b.set_subject_name(&name.build()).expect("subject");
        b.set_pubkey(key).expect("public key");
        if let Some(critical) = ca {
            let mut bc = BasicConstraints::new();
            bc.ca();
            if critical {
                bc.critical();
            }
            let mut exts = Stack::new().expect("stack");
            exts.push(bc.build().expect("basicConstraints"))
                .expect("push");
            b.add_extensions(&exts).expect("extensions");
        }
        // Ed25519 and Ed448 keys sign without a digest.
        let digest = if key.id() == openssl::pkey::Id::ED448 {
            MessageDigest::null()
        } else {
            MessageDigest::sha256()
        };
        b.sign(key, digest).expect("sign");
        String::from_utf8(b.build().to_pem().expect("PEM")).expect("ASCII")
    }

    #[tokio::test]
    async fn patch_rotates_the_cas() {
        let (app, cl) = app().await;
        let old = stored_ca(&app, &cl, None).await;
        let path = format!("PATCH /v1/certificates/{}", cl.uuid);
        let a = app.call(&path, "{}", CREATOR).await;
        expect(&a, 202, "");
        assert_eq!(a.json(), json!({"uuid": cl.uuid}));
        let got = reload(&app.t.conductor, &cl.uuid).await;
        assert_eq!(got.status, Some(Status::UpdateInProgress));
        let new = stored_ca(&app, &got, None).await;
        assert_ne!(new, old, "CA replaced");
        let a = app
            .call(&format!("GET /v1/certificates/{}", cl.uuid), "", CREATOR)
            .await;
        assert_eq!(a.json()["pem"], json!(new), "GET serves the rotated CA");
        // The cluster is now UPDATE_IN_PROGRESS.
        expect(
            &app.call(&path, "", CREATOR).await,
            400,
            "Updating a cluster when status is \"UPDATE_IN_PROGRESS\" is not supported.",
        );
    }

    /// Every x509keypair row, as stored.
    async fn all_key_pairs(app: &TestApp) -> Vec<magnum_domain::models::X509KeyPair> {
        app.t
            .db
            .q()
            .list_x509keypairs(
                &magnum_domain::query::Scope::ALL_PROJECTS,
                &magnum_domain::query::ListOptions::default(),
            )
            .await
            .expect("key pairs")
    }

    #[tokio::test]
    async fn patch_refusals_change_nothing() {
        let (app, _) = app().await;
        let c = &app.t.conductor;
        let norot = cluster_with_certificates(
            c,
            "norot",
            Status::CreateComplete,
            false,
            labels(&[("fake_no_ca_rotation", "true")]),
        )
        .await;
        cluster_with_certificates(c, "notls", Status::CreateComplete, true, None).await;
        let before = key_pair_rows(&app.t.db).await;
        let row_before = reload(c, &norot.uuid).await;
        let pairs_before = all_key_pairs(&app).await;
        expect(
            &app.call("PATCH /v1/certificates/norot", "", CREATOR).await,
            400,
            "'rotate_ca_certificate' is not supported by this driver.",
        );
        assert_eq!(key_pair_rows(&app.t.db).await, before, "no row added");
        assert!(
            all_key_pairs(&app).await == pairs_before,
            "a key pair row changed"
        );
        // The row diff: nothing of the cluster changed, its certificate
        // references included.
        assert_eq!(
            reload(c, &norot.uuid).await,
            row_before,
            "the row is unchanged"
        );
        expect(
            &app.call("PATCH /v1/certificates/notls", "", CREATOR).await,
            400,
            "Rotating the CA certificate on a non-TLS cluster is not supported",
        );
        expect(
            &app.call("PATCH /v1/certificates/c1", "", READER).await,
            403,
            "Policy doesn't allow certificate:rotate_ca to be performed.",
        );
        expect(
            &app.call("PATCH /v1/certificates/nope", "", CREATOR).await,
            404,
            "Cluster nope could not be found.",
        );
        expect(
            &app.call("PATCH /v1/certificates/c1", "{\"x\": 1}", CREATOR)
                .await,
            400,
            "Unknown argument: \"x\"",
        );
        assert_eq!(key_pair_rows(&app.t.db).await, before, "no row added");
    }

    /// The routes are unversioned (the 1.5 of CA rotation is not
    /// enforced), have no list, and PATCH without an identifier misses its
    /// argument.
    #[tokio::test]
    async fn versions_and_routes() {
        let (app, cl) = app().await;
        let at = |v: &'static str| {
            let mut h = CREATOR.to_vec();
            h.push(v);
            h
        };
        let a = app
            .call(
                &format!("GET /v1/certificates/{}", cl.uuid),
                "",
                &at("OpenStack-API-Version: container-infra 1.1"),
            )
            .await;
        expect(&a, 200, "");
        let a = app
            .call(
                &format!("PATCH /v1/certificates/{}", cl.uuid),
                "",
                &at("OpenStack-API-Version: container-infra 1.4"),
            )
            .await;
        expect(&a, 202, "");
        expect(
            &app.call("GET /v1/certificates", "", CREATOR).await,
            405,
            "",
        );
        expect(
            &app.call("PATCH /v1/certificates/", "", CREATOR).await,
            400,
            "Missing argument: \"cluster_ident\"",
        );
        let a = app
            .call(
                &format!("POST /v1/credentials/{}", cl.uuid),
                "",
                &at("OpenStack-API-Version: container-infra 1.12"),
            )
            .await;
        expect(&a, 405, "");
        assert_eq!(a.header("allow"), "PATCH");
    }

    #[tokio::test]
    async fn deleting_a_clusters_certificates_removes_its_rows() {
        let (app, mut cl) = app().await;
        assert_eq!(key_pair_rows(&app.t.db).await, 4);
        app.t
            .conductor
            .delete_cluster_certificates(&mut cl)
            .await
            .expect("delete");
        assert_eq!(key_pair_rows(&app.t.db).await, 0);
    }
}
