//! The certificates the conductor makes for a cluster, as a driver reads
//! them through the `cluster-secrets` import.

use magnum_domain::RequestContext;
use magnum_domain::models::Cluster;

use driver_host::{ClusterCas, SecretsAccess};

use crate::certs::{DriverSecrets, decrypt_pkcs8_pem, driver_key_pair};
use crate::testing::TestConductor;

fn owner() -> RequestContext {
    RequestContext {
        project_id: "p1".into(),
        user_id: "u1".into(),
        ..RequestContext::default()
    }
}

#[tokio::test]
async fn the_four_pairs_of_a_cluster_created_through_the_conductor() {
    let t = TestConductor::new().await;
    let c = &t.conductor;
    let mut cluster = Cluster {
        uuid: "5d12f6fd-a196-4bf0-ae4c-1f639a523a52".into(),
        name: "k8s".into(),
        project_id: "p1".into(),
        user_id: "u1".into(),
        ..Cluster::default()
    };
    c.generate_cluster_certificates(&owner(), &mut cluster)
        .await
        .expect("generate the certificates");
    let secrets = DriverSecrets::new(c.certificates().store.clone());
    let cas = secrets.cluster_cas(&cluster).await.expect("the CAs");

    // As the conductor reads them, byte for byte.
    let stored = c.cluster_key_pairs(&cluster).await.expect("key pairs");
    assert_eq!(
        cas,
        ClusterCas {
            kubernetes: driver_key_pair(stored.kubernetes),
            etcd: driver_key_pair(stored.etcd),
            front_proxy: driver_key_pair(stored.front_proxy),
            admin: driver_key_pair(stored.client),
        }
    );
    let pairs = [&cas.kubernetes, &cas.etcd, &cas.front_proxy, &cas.admin];
    let certs: std::collections::BTreeSet<_> = pairs.iter().map(|p| &p.cert_pem).collect();
    assert_eq!(certs.len(), 4, "four distinct certificates");
    for p in pairs {
        // Encrypted, as Magnum stores them; the passphrase opens them.
        assert!(
            p.key_pem
                .starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----"),
            "an unencrypted key"
        );
        assert!(
            decrypt_pkcs8_pem(p.key_pem.as_bytes(), &p.passphrase).is_ok(),
            "the passphrase does not open the key"
        );
    }
}
