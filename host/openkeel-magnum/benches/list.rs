//! The cluster list path with 1,000 clusters in SQLite: `GET
//! /v1/clusters?limit=1000` and `/v1/clusters/detail?limit=1000` through
//! the application the `api` command serves (options from a configuration
//! file, the composition root's database, policy, authenticator and
//! conductor; no authentication, the caller given by headers), once served
//! from the list cache and once right after a write to a cluster (the
//! write outside the measured time), which makes the request read and
//! render the page; the page read alone (the conductor's three queries:
//! clusters, their nodegroups, their templates); and the render alone (the
//! page to the response body, as the handler does it). Criterion's median
//! is the p50.
//!
//! `cargo bench -p openkeel-magnum --bench list`

use std::path::Path;
use std::sync::Arc;

use axum::body::Body;
use chrono::{NaiveDate, NaiveDateTime};
use criterion::{Criterion, criterion_group, criterion_main};
use http::Request;
use http_body_util::BodyExt;
use magnum_domain::microversion::Version;
use magnum_domain::models::{Cluster, ClusterTemplate, NodeGroup, StringMap};
use magnum_domain::{RequestContext, Status};
use openkeel_magnum::api::clusters::render_list;
use openkeel_magnum::api::views::Form;
use openkeel_magnum::app::{self, Mode};
use openkeel_magnum::conductor::Conductor;
use openkeel_magnum::db::{ClusterView, Db, ListOptions, Scope};
use openkeel_magnum::options;
use tower::ServiceExt;

const CLUSTERS: usize = 1000;
const PROJECT: &str = "6d4c1b2a0f9e48d7a6b5c4d3e2f1a0b9";
const USER: &str = "1a2b3c4d5e6f47089a0b1c2d3e4f5a6b";

fn map(pairs: &[(&str, &str)]) -> StringMap {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn at(day: u32, minute: u32) -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2026, 1 + day % 12, 1 + day % 28)
        .and_then(|d| d.and_hms_opt((minute / 60) % 24, minute % 60, 7))
        .unwrap_or_default()
}

fn uuid(kind: u32, i: usize) -> String {
    format!("{kind:08x}-0000-4000-8000-{i:012x}")
}

/// The template labels of the side-by-side run's seed (11 labels).
fn template_labels() -> StringMap {
    map(&[
        ("kube_tag", "v1.30.4"),
        ("containerd_version", "1.7.20"),
        ("cloud_provider_enabled", "true"),
        ("cinder_csi_enabled", "true"),
        ("auto_healing_enabled", "false"),
        ("auto_scaling_enabled", "false"),
        ("boot_volume_size", "40"),
        ("boot_volume_type", "ssd"),
        ("master_lb_floating_ip_enabled", "false"),
        ("octavia_provider", "amphora"),
        ("availability_zone", "nova"),
    ])
}

fn template() -> ClusterTemplate {
    ClusterTemplate {
        uuid: uuid(1, 1),
        name: "k8s-v1.30.4-ubuntu-2204".into(),
        project_id: PROJECT.into(),
        user_id: USER.into(),
        flavor_id: Some("m1.large".into()),
        master_flavor_id: Some("m1.medium".into()),
        image_id: Some("5f0f1bd2-4c0a-4f5c-9c55-0a1e0d7a1a01".into()),
        external_network_id: Some("public".into()),
        dns_nameserver: Some("8.8.8.8".into()),
        network_driver: Some("calico".into()),
        volume_driver: Some("cinder".into()),
        docker_volume_size: Some(50),
        docker_storage_driver: Some("overlay2".into()),
        cluster_distro: Some("ubuntu".into()),
        coe: Some("kubernetes".into()),
        labels: Some(template_labels()),
        tls_disabled: Some(false),
        public: Some(false),
        server_type: Some("vm".into()),
        master_lb_enabled: Some(true),
        floating_ip_enabled: Some(false),
        hidden: Some(false),
        registry_enabled: Some(false),
        tags: Some("anchor,capi".into()),
        driver: Some("fake".into()),
        created_at: at(0, 0),
        ..Default::default()
    }
}

/// Cluster `i` and its two default nodegroups, shaped as the side-by-side
/// run's seed rows (11–13 labels, a health reason per worker, addresses).
fn cluster(i: usize, template: &str) -> (Cluster, [NodeGroup; 2]) {
    let name = format!("bench-cluster-{i:05}");
    let masters = if i.is_multiple_of(10) { 3 } else { 1 };
    let workers = [1, 2, 3, 3, 5, 8][i % 6];
    let (octet, host) = ((i / 250) % 250 + 1, i % 250 + 1);
    let mut labels = template_labels();
    if i.is_multiple_of(4) {
        labels.insert("auto_healing_enabled".into(), "true".into());
        labels.insert(
            "auto_healing_controller".into(),
            "magnum-auto-healer".into(),
        );
    }
    if i.is_multiple_of(7) {
        labels.insert("extra_network_name".into(), "storage-net".into());
    }
    let mut reason = map(&[("api", "ok")]);
    for k in 0..workers {
        reason.insert(format!("{name}-default-worker-{k}.Ready"), "True".into());
    }
    let created = at(i as u32, (i * 37) as u32);
    let status = if i.is_multiple_of(5) {
        Status::UpdateComplete
    } else {
        Status::CreateComplete
    };
    let c = Cluster {
        uuid: uuid(2, i),
        name: name.clone(),
        project_id: PROJECT.into(),
        user_id: USER.into(),
        cluster_template_id: template.into(),
        keypair: Some("ops-key".into()),
        docker_volume_size: Some(50),
        labels: Some(labels.clone()),
        master_flavor_id: Some("m1.medium".into()),
        flavor_id: Some(
            if i.is_multiple_of(2) {
                "m1.large"
            } else {
                "m1.xlarge"
            }
            .into(),
        ),
        stack_id: Some(format!("{name}-{:08x}", i)),
        api_address: Some(format!("https://10.{octet}.{host}.5:6443")),
        status: Some(status),
        health_status: Some("HEALTHY".into()),
        health_status_reason: Some(reason),
        create_timeout: Some(60),
        coe_version: Some("v1.30.4".into()),
        ca_cert_ref: Some(uuid(3, i)),
        magnum_cert_ref: Some(uuid(4, i)),
        fixed_network: Some(uuid(5, 1)),
        fixed_subnet: Some(uuid(6, 1)),
        floating_ip_enabled: Some(false),
        master_lb_enabled: Some(true),
        created_at: created,
        updated_at: Some(created),
        ..Default::default()
    };
    let ng = |n: u32, role: &str, count: usize, last: usize| NodeGroup {
        uuid: uuid(n, i),
        name: format!("default-{role}"),
        cluster_id: c.uuid.clone(),
        project_id: PROJECT.into(),
        docker_volume_size: Some(50),
        labels: Some(labels.clone()),
        flavor_id: c.flavor_id.clone(),
        image_id: Some("5f0f1bd2-4c0a-4f5c-9c55-0a1e0d7a1a01".into()),
        node_addresses: Some(
            (0..count)
                .map(|k| format!("10.{octet}.{host}.{}", last + k))
                .collect(),
        ),
        node_count: Some(count as i32),
        min_node_count: Some(1),
        role: Some(role.into()),
        is_default: Some(true),
        stack_id: c.stack_id.clone(),
        status: Some(status),
        version: Some("v1.30.4".into()),
        created_at: created,
        updated_at: Some(created),
        ..Default::default()
    };
    let ngs = [ng(7, "master", masters, 10), ng(8, "worker", workers, 100)];
    (c, ngs)
}

/// The options of an `api` process on the SQLite file `db`, without
/// authentication, with the fake driver.
fn options(dir: &Path) -> Result<options::Options, String> {
    let conf = dir.join("bench.conf");
    let text = format!(
        "[DEFAULT]\nauth_strategy = noauth\n\n[database]\nconnection = sqlite:///{}\n\n\
         [drivers]\nenabled_beta_drivers = fake\n",
        dir.join("bench.sqlite").display()
    );
    std::fs::write(&conf, text).map_err(|e| format!("write {}: {e}", conf.display()))?;
    options::load(&[conf], &[])
        .map(|l| l.options)
        .map_err(|e| e.to_string())
}

async fn seed(db: &Db) -> Result<(), String> {
    let mut t = template();
    db.q()
        .create_cluster_template(&mut t)
        .await
        .map_err(|e| e.to_string())?;
    let tpl = t.uuid.clone();
    db.in_tx(|tx| {
        let tpl = tpl.clone();
        Box::pin(async move {
            for i in 1..=CLUSTERS {
                let (mut c, ngs) = cluster(i, &tpl);
                tx.q().create_cluster(&mut c).await?;
                for mut ng in ngs {
                    tx.q().create_nodegroup(&mut ng).await?;
                }
            }
            Ok::<(), openkeel_magnum::db::Error>(())
        })
    })
    .await
    .map_err(|e| e.to_string())
}

struct Fixture {
    app: axum::Router,
    conductor: Conductor,
    _dir: tempfile::TempDir,
}

async fn fixture() -> Result<Fixture, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let o = options(dir.path())?;
    let db = app::open_database(&o).await.map_err(|e| e.to_string())?;
    openkeel_magnum::db::upgrade(&db)
        .await
        .map_err(|e| e.to_string())?;
    seed(&db).await?;
    let conductor = app::conductor(&o, Mode::Api, db)
        .await
        .map_err(|e| e.to_string())?;
    let enforcer = Arc::new(app::load_policy(&o).map_err(|e| e.to_string())?);
    let auth = app::authenticator(&o, enforcer.clone())
        .await
        .map_err(|e| e.to_string())?;
    let app = app::application(&o, auth, conductor.clone(), enforcer);
    Ok(Fixture {
        app,
        conductor,
        _dir: dir,
    })
}

/// One request as a member of the seed's project; the body's length.
async fn get(app: &axum::Router, target: &str) -> usize {
    let req = Request::builder()
        .uri(target)
        .header("host", "localhost")
        .header("x-project-id", PROJECT)
        .header("x-user-id", USER)
        .header("x-roles", "member,reader")
        .header("openstack-api-version", "container-infra latest")
        .body(Body::empty());
    let Ok(req) = req else { return 0 };
    let Ok(resp) = app.clone().oneshot(req).await;
    assert!(resp.status().is_success(), "{target}: {}", resp.status());
    match resp.into_body().collect().await {
        Ok(b) => b.to_bytes().len(),
        Err(e) => panic!("{target}: body: {e}"),
    }
}

fn list(c: &mut Criterion) {
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => panic!("tokio runtime: {e}"),
    };
    let f = match rt.block_on(fixture()) {
        Ok(f) => f,
        Err(e) => panic!("set-up: {e}"),
    };
    for target in ["/v1/clusters?limit=1000", "/v1/clusters/detail?limit=1000"] {
        let bytes = rt.block_on(get(&f.app, target));
        assert!(bytes > CLUSTERS * 200, "{target}: {bytes} bytes");
        eprintln!("{target}: {bytes} bytes");
    }
    let mut g = c.benchmark_group("list of 1000 clusters, SQLite");
    g.sample_size(30);
    let mut written = rt
        .block_on(
            f.conductor
                .db()
                .q()
                .get_cluster_by_id(1, &Scope::ALL_PROJECTS),
        )
        .unwrap_or_else(|e| panic!("cluster 1: {e}"));
    let mut write = || {
        rt.block_on(
            f.conductor
                .db()
                .q()
                .update_cluster(&mut written, &["status"]),
        )
        .unwrap_or_else(|e| panic!("write: {e}"))
    };
    for target in ["/v1/clusters?limit=1000", "/v1/clusters/detail?limit=1000"] {
        g.bench_function(format!("GET {target} (cached answer)"), |b| {
            b.iter(|| rt.block_on(get(&f.app, target)))
        });
        g.bench_function(
            format!("GET {target} (after a write: read + render)"),
            |b| {
                b.iter_batched(
                    &mut write,
                    |()| rt.block_on(get(&f.app, target)),
                    criterion::BatchSize::PerIteration,
                )
            },
        );
    }
    let ctx = RequestContext {
        user_id: USER.into(),
        project_id: PROJECT.into(),
        roles: vec!["member".into(), "reader".into()],
        ..Default::default()
    };
    let page = ListOptions {
        limit: Some(CLUSTERS as u64),
        ..Default::default()
    };
    for (name, view) in [
        ("summary page read (three queries)", ClusterView::Summary),
        ("detail page read (three queries)", ClusterView::Detail),
    ] {
        g.bench_function(name, |b| {
            b.iter(
                || match rt.block_on(f.conductor.list_clusters(&ctx, &page, Some(view))) {
                    Ok(p) => p.clusters.len(),
                    Err(e) => panic!("{name}: {e}"),
                },
            )
        });
    }
    for (name, view, form, resource) in [
        (
            "summary page render (to the body)",
            ClusterView::Summary,
            Form::Summary,
            "clusters",
        ),
        (
            "detail page render (to the body)",
            ClusterView::Detail,
            Form::Detail,
            "clusters/detail",
        ),
    ] {
        let p = match rt.block_on(f.conductor.list_clusters(&ctx, &page, Some(view))) {
            Ok(p) => p,
            Err(e) => panic!("{name}: {e}"),
        };
        assert_eq!(p.clusters.len(), CLUSTERS, "{name}");
        let last = p
            .clusters
            .last()
            .map(|c| c.uuid.clone())
            .unwrap_or_default();
        let next = format!("http://localhost/v1/{resource}?limit={CLUSTERS}&marker={last}");
        g.bench_function(name, |b| {
            b.iter(|| {
                render_list(
                    "http://localhost",
                    Version::MAX,
                    &p,
                    form,
                    Some(next.clone()),
                )
            })
        });
    }
    g.finish();
}

criterion_group!(benches, list);
criterion_main!(benches);
