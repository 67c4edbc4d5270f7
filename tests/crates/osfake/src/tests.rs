use std::time::Duration;

use serde_json::{Value, json};

use super::*;

fn seed() -> Seed {
    Seed {
        images: vec![
            Image {
                id: "i1".into(),
                name: "ubuntu".into(),
                os_distro: "ubuntu".into(),
                properties: BTreeMap::from([("kube_version".into(), "v1.30.2".into())]),
                ..Default::default()
            },
            Image {
                id: "i2".into(),
                name: "ubuntu".into(),
                ..Default::default()
            },
            Image {
                id: "i3".into(),
                name: "hidden".into(),
                hidden: true,
                ..Default::default()
            },
        ],
        flavors: vec![
            Flavor {
                id: "1".into(),
                name: "m1.small".into(),
                vcpus: 1,
                ram: 2048,
                disk: 20,
            },
            Flavor {
                id: "2".into(),
                name: "m1.medium".into(),
                vcpus: 2,
                ram: 4096,
                disk: 40,
            },
        ],
        keypairs: vec![Keypair {
            name: "k".into(),
            public_key: "ssh-ed25519 AAAA".into(),
            fingerprint: "f".into(),
            ..Default::default()
        }],
        networks: vec![
            Network {
                id: "n1".into(),
                name: "public".into(),
                external: true,
                ..Default::default()
            },
            Network {
                id: "n2".into(),
                name: "private".into(),
                ..Default::default()
            },
        ],
        subnets: vec![Subnet {
            id: "s1".into(),
            name: "private-subnet".into(),
            network_id: "n2".into(),
            cidr: "10.0.0.0/24".into(),
        }],
        ..Default::default()
    }
}

async fn start(seed: Seed) -> OsFake {
    match OsFake::start(seed).await {
        Ok(f) => f,
        Err(e) => panic!("start the double: {e}"),
    }
}

thread_local! {
    /// One client per test (each test runs on a thread of its own, with a
    /// runtime of its own): building one loads the system's roots, which
    /// costs more than the requests.
    static CLIENT: reqwest::Client = match reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
    {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    };
}

fn client() -> reqwest::Client {
    CLIENT.with(Clone::clone)
}

/// Sends a request with token `tok` and returns the status and the JSON body
/// (`Null` when the body is not JSON).
async fn send(method: Method, url: &str, token: &str, body: Option<Value>) -> (u16, Value) {
    let mut req = client().request(method, url).header("x-auth-token", token);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = match req.send().await {
        Ok(r) => r,
        Err(e) => panic!("{url}: {e}"),
    };
    let status = resp.status().as_u16();
    let json = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        == Some("application/json");
    let raw = resp.bytes().await.unwrap_or_default();
    let value = if json {
        serde_json::from_slice(&raw).unwrap_or(Value::Null)
    } else {
        Value::Null
    };
    (status, value)
}

async fn get(url: &str) -> (u16, Value) {
    send(Method::GET, url, "tok", None).await
}

// Go: TestGlance.
#[tokio::test]
async fn glance_shows_and_lists_images() {
    let s = start(seed()).await;
    let base = s.endpoint(Service::Image, "public");
    let (st, img) = get(&format!("{base}/v2/images/i1")).await;
    assert_eq!(st, 200, "show");
    assert_eq!(
        (&img["os_distro"], &img["kube_version"], &img["id"]),
        (&json!("ubuntu"), &json!("v1.30.2"), &json!("i1")),
        "properties are top-level: {img}"
    );
    assert_eq!(get(&format!("{base}/v2/images/nope")).await.0, 404);

    s.set_page_size(1);
    let (_, list) = get(&format!("{base}/v2/images?name=ubuntu")).await;
    assert_eq!(list["images"].as_array().map(Vec::len), Some(1));
    assert_eq!(list["next"], json!("/v2/images?marker=i1&name=ubuntu"));
    let (_, list) = get(&format!("{base}/v2/images?marker=i1&name=ubuntu")).await;
    assert_eq!(list["images"].as_array().map(Vec::len), Some(1));
    assert_eq!(list["images"][0]["id"], json!("i2"), "second page");
    s.set_page_size(0);
    let (_, list) = get(&format!("{base}/v2/images?name=hidden")).await;
    assert_eq!(list["images"], json!([]), "hidden image listed");
}

// Go: TestNova.
#[tokio::test]
async fn nova_shows_flavors_and_keypairs() {
    let s = start(seed()).await;
    let base = s.endpoint(Service::Compute, "internal");
    let (st, show) = get(&format!("{base}/flavors/2")).await;
    assert_eq!(st, 200);
    assert_eq!(show["flavor"]["name"], json!("m1.medium"));
    assert_eq!(show["flavor"]["disk"], json!(40));
    let (st, nf) = get(&format!("{base}/flavors/m1.medium")).await;
    assert_eq!(st, 404);
    assert_eq!(
        nf["itemNotFound"]["message"],
        json!("Flavor m1.medium could not be found.")
    );
    s.set_page_size(1);
    let (_, list) = get(&format!("{base}/flavors/detail")).await;
    assert_eq!(list["flavors"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        list["flavors_links"],
        json!([{"rel": "next", "href": format!("{base}/flavors/detail?marker=1")}])
    );
    let (st, kp) = get(&format!("{base}/os-keypairs/k")).await;
    assert_eq!(st, 200);
    assert_eq!(kp["keypair"]["public_key"], json!("ssh-ed25519 AAAA"));
    assert_eq!(get(&format!("{base}/os-keypairs/other")).await.0, 404);
    let c = &s.calls()[0];
    assert_eq!(
        (
            c.interface.as_str(),
            c.service,
            c.path.as_str(),
            c.token.as_deref()
        ),
        ("internal", Service::Compute, "/v2.1/flavors/2", Some("tok")),
        "recorded call {c:?}"
    );
}

#[tokio::test]
async fn nova_shows_the_extra_specs_of_a_flavor() {
    let s = start(seed()).await;
    s.set_flavor_extra_specs("2", BTreeMap::from([("resources:VGPU".into(), "1".into())]));
    let base = s.endpoint(Service::Compute, "public");
    let (st, specs) = get(&format!("{base}/flavors/2/os-extra_specs")).await;
    assert_eq!(st, 200);
    assert_eq!(specs, json!({"extra_specs": {"resources:VGPU": "1"}}));
    let (st, none) = get(&format!("{base}/flavors/1/os-extra_specs")).await;
    assert_eq!((st, none), (200, json!({"extra_specs": {}})));
    let (st, nf) = get(&format!("{base}/flavors/9/os-extra_specs")).await;
    assert_eq!(st, 404);
    assert_eq!(
        nf["itemNotFound"]["message"],
        json!("Flavor 9 could not be found.")
    );
}

// Go: TestNeutron.
#[tokio::test]
async fn neutron_filters_networks_and_subnets() {
    let s = start(seed()).await;
    let base = format!("{}/v2.0", s.endpoint(Service::Network, "public"));
    for (q, want) in [
        ("", vec!["public", "private"]),
        ("?router:external=True", vec!["public"]),
        ("?router%3Aexternal=false", vec!["private"]),
        ("?name=private", vec!["private"]),
        ("?name=public&router:external=false", vec![]),
        ("?id=n1&id=n2", vec!["public", "private"]),
    ] {
        let (_, body) = get(&format!("{base}/networks{q}")).await;
        let names: Vec<&str> = body["networks"]
            .as_array()
            .map(|a| a.iter().filter_map(|n| n["name"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(names, want, "networks{q}");
    }
    let (st, e) = get(&format!("{base}/networks/nope")).await;
    assert_eq!(st, 404);
    assert_eq!(e["NeutronError"]["type"], json!("NetworkNotFound"));
    let (_, sub) = get(&format!("{base}/subnets?network_id=n2")).await;
    assert_eq!(sub["subnets"].as_array().map(Vec::len), Some(1));
    assert_eq!(sub["subnets"][0]["cidr"], json!("10.0.0.0/24"));
    let calls = s.calls();
    assert!(
        calls[0].is_list() && !calls[0].filtered() && calls[3].filtered(),
        "list classification: {:?}",
        &calls[..4]
    );
    // The first three network lists and the subnet list by network.
    assert_eq!(s.unfiltered_lists().len(), 4);
}

/// What a dashboard reads at login and on its overview: Neutron's
/// extensions, ports and quota details, Nova's quota details.
#[tokio::test]
async fn dashboard_reads_extensions_ports_and_quotas() {
    let s = start(seed()).await;
    let net = format!("{}/v2.0", s.endpoint(Service::Network, "public"));
    let (code, ext) = get(&format!("{net}/extensions")).await;
    assert_eq!(code, 200);
    let aliases: Vec<&str> = ext["extensions"]
        .as_array()
        .map(|a| a.iter().filter_map(|e| e["alias"].as_str()).collect())
        .unwrap_or_default();
    assert!(aliases.contains(&"external-net"), "{aliases:?}");
    let (code, ports) = get(&format!("{net}/ports?tenant_id=p1")).await;
    assert_eq!((code, ports), (200, json!({"ports": []})));
    let (code, q) = get(&format!("{net}/quotas/p1/details")).await;
    assert_eq!(code, 200);
    assert_eq!(
        q["quota"]["network"],
        json!({"used": 2, "limit": 100, "reserved": 0})
    );
    let compute = s.endpoint(Service::Compute, "public");
    let (code, q) = get(&format!("{compute}/os-quota-sets/p1/detail")).await;
    assert_eq!(code, 200);
    assert_eq!(q["quota_set"]["id"], json!("p1"));
    assert_eq!(q["quota_set"]["instances"]["in_use"], json!(0));
}

// Go: TestFaults.
#[tokio::test]
async fn faults_statuses_tokens_and_hangs() {
    let s = start(seed()).await;
    s.inject(Fault {
        service: Some(Service::Network),
        path: Some("/v2.0/subnets".into()),
        status: 503,
        times: 1,
        ..Default::default()
    });
    let u = format!("{}/v2.0/subnets", s.endpoint(Service::Network, "public"));
    assert_eq!(get(&u).await.0, 503, "first call");
    assert_eq!(get(&u).await.0, 200, "after the fault");

    s.require_token(Some("other"));
    assert_eq!(get(&u).await.0, 401, "wrong token");
    s.require_token(None);

    s.inject(Fault {
        service: Some(Service::Image),
        hang: true,
        ..Default::default()
    });
    let impatient = match reqwest::Client::builder()
        .timeout(Duration::from_millis(50))
        .build()
    {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    };
    let resp = impatient
        .get(format!(
            "{}/v2/images",
            s.endpoint(Service::Image, "public")
        ))
        .send()
        .await;
    match resp {
        Ok(r) => panic!("hung request answered {}", r.status()),
        Err(e) => assert!(e.is_timeout(), "error = {e}"),
    }
    s.reset();
    let img = format!("{}/v2/images/i1", s.endpoint(Service::Image, "public"));
    assert_eq!(get(&img).await.0, 200, "after reset");
    assert_eq!(s.calls().len(), 1, "calls after reset");
}

// Go: TestCatalog.
#[tokio::test]
async fn catalog_lists_every_service_interface_and_region() {
    let s = start(Seed::default()).await;
    let cat: Value =
        match serde_json::from_slice(&s.catalog_for_regions(&["RegionOne", "RegionTwo"])) {
            Ok(v) => v,
            Err(e) => panic!("{e}"),
        };
    let mut got = BTreeMap::new();
    for e in cat.as_array().into_iter().flatten() {
        for ep in e["endpoints"].as_array().into_iter().flatten() {
            got.insert(
                format!(
                    "{} {} {}",
                    e["type"].as_str().unwrap_or_default(),
                    ep["interface"].as_str().unwrap_or_default(),
                    ep["region"].as_str().unwrap_or_default()
                ),
                ep["url"].as_str().unwrap_or_default().to_owned(),
            );
        }
    }
    let url = s.url();
    for (k, want) in [
        ("image public RegionOne", format!("{url}/image")),
        (
            "compute internal RegionOne",
            format!("{url}/internal/compute/v2.1"),
        ),
        ("network admin RegionOne", format!("{url}/admin/network")),
        (
            "network public RegionTwo",
            format!("{url}/RegionTwo/network"),
        ),
        (
            "load-balancer public RegionOne",
            format!("{url}/load-balancer"),
        ),
        (
            "block-storage internal RegionOne",
            format!("{url}/internal/volume/v3"),
        ),
        ("sharev2 admin RegionOne", format!("{url}/admin/share/v2")),
        ("identity public RegionOne", format!("{url}/identity/v3")),
    ] {
        assert_eq!(got.get(k), Some(&want), "{k}");
    }
    // Seven services, three interfaces, two regions.
    assert_eq!(got.len(), 42);
    let without: Value =
        serde_json::from_slice(&s.catalog_without(&[Service::LoadBalancer])).unwrap_or(Value::Null);
    let types: Vec<&str> = without
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["type"].as_str())
        .collect();
    assert_eq!(
        types,
        [
            "image",
            "compute",
            "network",
            "block-storage",
            "sharev2",
            "identity"
        ]
    );
    // A region other than RegionOne is not served.
    assert_eq!(
        get(&format!("{url}/RegionTwo/network/v2.0/networks"))
            .await
            .0,
        404
    );
    assert!(s.calls().is_empty());
}

#[tokio::test]
async fn load_balancers_are_per_project_and_go_after_the_delay() {
    let s = start(Seed::default()).await;
    s.add_token("user-token", "p1");
    let lbs = format!(
        "{}/v2/lbaas/loadbalancers",
        s.endpoint(Service::LoadBalancer, "public")
    );
    for (id, project, listeners) in [
        ("lb-1", "p1", vec!["l1".to_owned()]),
        ("lb-2", "p2", vec![]),
    ] {
        s.add_load_balancer(LoadBalancer {
            id: id.into(),
            project_id: project.into(),
            vip_port_id: format!("port-{id}"),
            listeners,
            ..Default::default()
        });
    }
    s.add_floating_ip(FloatingIp {
        id: "fip-1".into(),
        address: "203.0.113.10".into(),
        port_id: "port-lb-1".into(),
        project_id: "p1".into(),
        ..Default::default()
    });
    let (st, list) = send(Method::GET, &lbs, "user-token", None).await;
    assert_eq!(st, 200);
    assert_eq!(list["loadbalancers"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        list["loadbalancers"][0]["provisioning_status"],
        json!("ACTIVE")
    );
    let other = format!("{lbs}?project_id=p2");
    assert_eq!(send(Method::GET, &other, "user-token", None).await.0, 403);
    assert_eq!(send(Method::GET, &other, SERVICE_TOKEN, None).await.0, 200);
    assert_eq!(send(Method::GET, &lbs, "unknown", None).await.0, 401);

    s.set_delete_delay(1);
    let one = format!("{lbs}/lb-1");
    assert_eq!(
        send(Method::DELETE, &one, "user-token", None).await.0,
        400,
        "children without cascade"
    );
    assert_eq!(
        send(
            Method::DELETE,
            &format!("{one}?cascade=true"),
            "user-token",
            None
        )
        .await
        .0,
        204
    );
    assert_eq!(
        send(
            Method::DELETE,
            &format!("{one}?cascade=true"),
            "user-token",
            None
        )
        .await
        .0,
        409,
        "PENDING_DELETE"
    );
    let (_, shown) = send(Method::GET, &one, "user-token", None).await;
    assert_eq!(
        shown["loadbalancer"]["provisioning_status"],
        json!("PENDING_DELETE")
    );
    assert_eq!(
        send(Method::GET, &one, "user-token", None).await.0,
        404,
        "gone"
    );
    assert_eq!(s.floating_ips()[0].port_id, "", "the VIP port went with it");

    let fips = format!(
        "{}/v2.0/floatingips",
        s.endpoint(Service::Network, "public")
    );
    assert_eq!(
        send(Method::DELETE, &format!("{fips}/fip-1"), "user-token", None)
            .await
            .0,
        204
    );
    assert!(s.floating_ips().is_empty());
}

#[tokio::test]
async fn server_groups_are_created_listed_and_deleted() {
    let s = start(Seed {
        tokens: BTreeMap::from([("user-token".into(), "p1".into())]),
        ..Default::default()
    })
    .await;
    let groups = format!(
        "{}/os-server-groups",
        s.endpoint(Service::Compute, "public")
    );
    let (st, created) = send(
        Method::POST,
        &groups,
        "user-token",
        Some(json!({"server_group": {"name": "g", "policies": ["anti-affinity"]}})),
    )
    .await;
    assert_eq!(st, 200);
    let id = created["server_group"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(id, "5e0c0000-0000-4000-8000-000000000001");
    let bad = json!({"server_group": {"name": "g", "policies": []}});
    assert_eq!(
        send(Method::POST, &groups, "user-token", Some(bad)).await.0,
        400
    );
    let (_, mine) = send(Method::GET, &groups, "user-token", None).await;
    assert_eq!(
        mine["server_groups"][0]["policies"],
        json!(["anti-affinity"])
    );
    let (_, theirs) = send(Method::GET, &groups, SERVICE_TOKEN, None).await;
    assert_eq!(
        theirs["server_groups"],
        json!([]),
        "the service project has none"
    );
    let all = format!("{groups}?all_projects=true");
    let (_, every) = send(Method::GET, &all, SERVICE_TOKEN, None).await;
    assert_eq!(every["server_groups"].as_array().map(Vec::len), Some(1));
    let one = format!("{groups}/{id}");
    assert_eq!(send(Method::DELETE, &one, SERVICE_TOKEN, None).await.0, 204);
    assert_eq!(send(Method::DELETE, &one, SERVICE_TOKEN, None).await.0, 404);
    assert!(s.server_groups().is_empty());
}

#[tokio::test]
async fn cinder_lists_volume_types_and_the_default() {
    let s = start(Seed::default()).await;
    for (id, name) in [("1", "__DEFAULT__"), ("2", "ssd")] {
        s.add_volume_type(VolumeType {
            id: id.into(),
            name: name.into(),
        });
    }
    let base = s.endpoint(Service::BlockStorage, "public");
    for prefix in [base.clone(), format!("{base}/p1")] {
        let (st, list) = get(&format!("{prefix}/types")).await;
        assert_eq!(st, 200, "{prefix}");
        assert_eq!(list["volume_types"][1]["name"], json!("ssd"));
    }
    assert_eq!(get(&format!("{base}/types/default")).await.0, 404);
    s.set_default_volume_type(Some("ssd"));
    let (_, def) = get(&format!("{base}/types/default")).await;
    assert_eq!(def["volume_type"]["id"], json!("2"));
}

#[tokio::test]
async fn manila_lists_share_types_and_the_default() {
    let s = start(Seed::default()).await;
    s.add_share_type(ShareType {
        id: "st-1".into(),
        name: "default".into(),
        driver_handles_share_servers: Some(false),
    });
    s.add_share_type(ShareType {
        id: "st-2".into(),
        name: "cephfs".into(),
        driver_handles_share_servers: None,
    });
    let base = s.endpoint(Service::SharedFileSystem, "public");
    assert_eq!(base, format!("{}/share/v2", s.url()));
    for prefix in [base.clone(), format!("{base}/p1")] {
        let (st, list) = get(&format!("{prefix}/types")).await;
        assert_eq!(st, 200, "{prefix}");
        assert_eq!(list["share_types"][0]["id"], json!("st-1"));
        assert_eq!(
            list["share_types"][0]["extra_specs"],
            json!({"driver_handles_share_servers": "False"})
        );
        assert_eq!(list["share_types"][1]["extra_specs"], json!({}));
        assert_eq!(list["volume_types"], list["share_types"]);
    }
    assert_eq!(get(&format!("{base}/types/default")).await.0, 404);
    s.set_default_share_type(Some("cephfs"));
    let (_, def) = get(&format!("{base}/types/default")).await;
    assert_eq!(def["share_type"]["id"], json!("st-2"));
    assert_eq!(get(&format!("{base}/types/st-1")).await.0, 200);
    assert_eq!(get(&format!("{base}/types/st-9")).await.0, 404);
    assert!(
        s.calls()
            .iter()
            .all(|c| c.service == Service::SharedFileSystem)
    );
}

#[tokio::test]
async fn identity_keeps_the_application_credentials_of_users() {
    let mut seed = Seed::default();
    for (token, user) in [("u1-tok", "u1"), ("u2-tok", "u2")] {
        seed.user_tokens.insert(
            token.into(),
            UserToken {
                user_id: user.into(),
                project_id: "p1".into(),
                roles: vec!["member".into(), "reader".into()],
                ..Default::default()
            },
        );
    }
    let s = start(seed).await;
    let creds = |user: &str| {
        format!(
            "{}/users/{user}/application_credentials",
            s.identity_endpoint()
        )
    };
    let create = |roles: Value| json!({"application_credential": {"name": "c1", "roles": roles}});
    let (st, created) = send(
        Method::POST,
        &creds("u1"),
        "u1-tok",
        Some(create(json!([{"name": "member"}]))),
    )
    .await;
    assert_eq!(st, 201, "{created}");
    let ac = &created["application_credential"];
    assert_eq!(
        (&ac["user_id"], &ac["project_id"], &ac["roles"][0]["name"]),
        (&json!("u1"), &json!("p1"), &json!("member"))
    );
    let id = ac["id"].as_str().unwrap_or_default().to_owned();
    assert!(ac["secret"].as_str().is_some_and(|s| !s.is_empty()));
    // The same name again, a role the user lacks, another user's path, an
    // unknown token.
    let again = create(json!([]));
    assert_eq!(
        send(Method::POST, &creds("u1"), "u1-tok", Some(again))
            .await
            .0,
        409
    );
    let admin = json!({"application_credential": {"name": "c2", "roles": [{"name": "admin"}]}});
    assert_eq!(
        send(Method::POST, &creds("u1"), "u1-tok", Some(admin))
            .await
            .0,
        404
    );
    let theirs = json!({"application_credential": {"name": "c3"}});
    assert_eq!(
        send(Method::POST, &creds("u1"), "u2-tok", Some(theirs.clone()))
            .await
            .0,
        403
    );
    assert_eq!(
        send(Method::POST, &creds("u1"), "nobody", Some(theirs))
            .await
            .0,
        401
    );
    let one = format!("{}/{id}", creds("u1"));
    let (st, shown) = send(Method::GET, &one, "u1-tok", None).await;
    assert_eq!(st, 200);
    assert!(
        shown["application_credential"].get("secret").is_none(),
        "the secret is shown once"
    );
    assert_eq!(send(Method::DELETE, &one, "u2-tok", None).await.0, 403);
    assert_eq!(send(Method::DELETE, &one, SERVICE_TOKEN, None).await.0, 204);
    assert_eq!(send(Method::DELETE, &one, SERVICE_TOKEN, None).await.0, 404);
    assert!(s.application_credentials().is_empty());
    // Recorded, with the token used; the token requests are not.
    let calls: Vec<String> = s.calls().iter().map(ToString::to_string).collect();
    assert_eq!(calls.len(), 9, "{calls:?}");
    assert_eq!(
        calls[0],
        "POST identity /v3/users/u1/application_credentials"
    );
    assert_eq!(s.calls()[8].token.as_deref(), Some(SERVICE_TOKEN));
}

#[tokio::test]
async fn identity_issues_the_service_token_with_a_catalog() {
    let s = start(Seed::default()).await;
    let resp = client()
        .post(format!("{}/auth/tokens", s.identity_endpoint()))
        .json(&json!({"auth": {"identity": {"methods": ["password"]}}}))
        .send()
        .await;
    let resp = match resp {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(resp.status().as_u16(), 201);
    assert_eq!(
        resp.headers()
            .get("x-subject-token")
            .and_then(|v| v.to_str().ok()),
        Some(SERVICE_TOKEN)
    );
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    let catalog: Value = serde_json::from_slice(&s.catalog()).unwrap_or(Value::Null);
    assert_eq!(body["token"]["catalog"], catalog);
    assert!(s.calls().is_empty(), "Keystone calls are not recorded");
    assert_eq!(s.authentications(), 1);
}

#[tokio::test]
async fn control_api_and_seed_files() {
    let seed: Seed = match serde_json::from_value(json!({
        "images": [{"id": "i1", "name": "ubuntu", "os_distro": "ubuntu"}],
        "keypairs": [{"name": "k", "type": "x509"}],
        "tokens": {"t": "p"},
        "default_project": "anyone",
    })) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    assert!(serde_json::from_value::<Seed>(json!({"imagez": []})).is_err());
    let s = start(seed).await;
    assert_eq!(s.description()["url"], json!(s.url()));
    let (st, _) = send(
        Method::POST,
        &format!("{}/_osfake/faults", s.url()),
        "",
        Some(json!({"service": "image", "status": 418, "times": 1})),
    )
    .await;
    assert_eq!(st, 204);
    let img = format!("{}/v2/images/i1", s.endpoint(Service::Image, "admin"));
    assert_eq!(get(&img).await.0, 418);
    assert_eq!(get(&img).await.0, 200);
    let (_, calls) = get(&format!("{}/_osfake/calls", s.url())).await;
    assert_eq!(calls[1]["interface"], json!("admin"));
    assert_eq!(calls[1]["path"], json!("/v2/images/i1"));
    let (_, kp) = get(&format!(
        "{}/os-keypairs/k",
        s.endpoint(Service::Compute, "")
    ))
    .await;
    assert_eq!(kp["keypair"]["type"], json!("x509"));
    // Unknown tokens act as users of the default project.
    let groups = format!("{}/os-server-groups", s.endpoint(Service::Compute, ""));
    assert_eq!(
        send(Method::GET, &groups, "from-keystone", None).await.0,
        200
    );
    let (st, _) = send(
        Method::POST,
        &format!("{}/_osfake/reset", s.url()),
        "",
        None,
    )
    .await;
    assert_eq!(st, 204);
    assert!(s.calls().is_empty());
}

#[tokio::test]
async fn identity_validates_the_user_tokens_of_the_seed() {
    let mut seed = Seed::default();
    seed.user_tokens.insert(
        "u-tok".into(),
        UserToken {
            user_id: "fake_user".into(),
            project_id: "fake_project".into(),
            roles: vec!["member".into(), "reader".into()],
            ..Default::default()
        },
    );
    let s = start(seed).await;
    let validate = |auth: &'static str, subject: &'static str| {
        let url = format!("{}/auth/tokens", s.identity_endpoint());
        async move {
            let resp = client()
                .get(url)
                .header("x-auth-token", auth)
                .header("x-subject-token", subject)
                .send()
                .await;
            match resp {
                Ok(r) => (
                    r.status().as_u16(),
                    r.json::<Value>().await.unwrap_or(Value::Null),
                ),
                Err(e) => panic!("{e}"),
            }
        }
    };
    let (st, body) = validate(SERVICE_TOKEN, "u-tok").await;
    assert_eq!(st, 200, "{body}");
    let t = &body["token"];
    assert_eq!(t["user"]["id"], json!("fake_user"));
    assert_eq!(t["user"]["name"], json!("fake_user"));
    assert_eq!(t["project"]["id"], json!("fake_project"));
    assert_eq!(t["project"]["domain"]["id"], json!("default"));
    let roles: Vec<&Value> = t["roles"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| &r["name"])
        .collect();
    assert_eq!(roles, [&json!("member"), &json!("reader")]);
    let catalog: Value = serde_json::from_slice(&s.catalog()).unwrap_or(Value::Null);
    assert_eq!(t["catalog"], catalog);
    assert_eq!(validate(SERVICE_TOKEN, "other").await.0, 404);
    assert_eq!(validate("nobody", "u-tok").await.0, 401);
    // A user token is a token of its project on the read-write services.
    let groups = format!("{}/os-server-groups", s.endpoint(Service::Compute, ""));
    assert_eq!(send(Method::GET, &groups, "u-tok", None).await.0, 200);
    assert_eq!(send(Method::GET, &groups, "other", None).await.0, 401);
}

#[tokio::test]
async fn a_new_seed_replaces_the_resources_calls_and_faults() {
    let s = start(seed()).await;
    let img = format!("{}/v2/images/i1", s.endpoint(Service::Image, ""));
    let other = format!("{}/v2/images/i9", s.endpoint(Service::Image, ""));
    assert_eq!(get(&img).await.0, 200);
    s.inject(Fault {
        status: 500,
        ..Default::default()
    });
    let (st, _) = send(
        Method::PUT,
        &format!("{}/_osfake/seed", s.url()),
        "",
        Some(json!({"images": [{"id": "i9", "name": "nine", "os_distro": "debian"}]})),
    )
    .await;
    assert_eq!(st, 204);
    assert!(s.calls().is_empty(), "calls are forgotten");
    assert_eq!(get(&img).await.0, 404);
    let (st, body) = get(&other).await;
    assert_eq!(
        (st, &body["os_distro"]),
        (200, &json!("debian")),
        "fault gone"
    );
    let (st, _) = send(
        Method::PUT,
        &format!("{}/_osfake/seed", s.url()),
        "",
        Some(json!({"imagez": []})),
    )
    .await;
    assert_eq!(st, 400);
    s.set_seed(Seed::default());
    assert_eq!(get(&other).await.0, 404);
}

#[test]
fn queries_encode_like_go() {
    let q = Query::parse("name=a+b%2Fc&router%3Aexternal=true&id=x&id=y&e=");
    assert_eq!(q.get("name"), Some("a b/c"));
    assert_eq!(q.get_all("id"), ["x", "y"]);
    assert!(q.has("e"));
    assert_eq!(
        q.encode(),
        "e=&id=x&id=y&name=a+b%2Fc&router%3Aexternal=true"
    );
}

// The test side of the real Keystone: a region published for a test shows
// in the catalog of new tokens, and is gone once removed.
#[tokio::test]
async fn keystone_publishes_catalog_regions() {
    let Some(k) = keystone::Identity::from_env().await else {
        return;
    };
    assert_eq!(k.projects.len(), 4, "{:?}", k.projects);
    assert!(!k.user_id("demo").await.is_empty());
    let fake = start(Seed::default()).await;
    let region = "okm-osfake-test";
    let image = fake.endpoint(Service::Image, "public");
    let published = k
        .publish_catalog(region, "osfake tests", &[("image", "glance", &image)])
        .await;
    let urls_in_region = |catalog: &Value| -> Vec<String> {
        catalog
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|e| e["endpoints"].as_array().cloned().unwrap_or_default())
            .filter(|ep| ep["region_id"] == json!(region))
            .filter_map(|ep| ep["url"].as_str().map(str::to_owned))
            .collect()
    };
    // The catalog of a new token of demo.
    async fn catalog(k: &keystone::Identity) -> Value {
        let token = k.token("demo", "demo").await;
        let (_, body) = k
            .call(Some(&token), Method::GET, "/auth/catalog", None, &[200])
            .await;
        body["catalog"].clone()
    }
    let urls = urls_in_region(&catalog(&k).await);
    published.remove(&k).await;
    assert_eq!(urls, vec![image.clone(); 3], "public, internal, admin");
    let after = urls_in_region(&catalog(&k).await);
    assert!(after.is_empty(), "left after removal: {after:?}");
}
