//! Reading one cluster by uuid (the lookup of every cluster request) on
//! MariaDB, from `OKM_TEST_MYSQL_URL`, and on a SQLite file. Each run
//! creates its own database (`okm_db_bench_*`) and drops it at the end.
//!
//! `cargo bench -p magnum-db --bench db`

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use magnum_db::{Db, DbTarget, Dialect, Scope, upgrade};
use magnum_domain::models::Cluster;
use sqlx::Executor;

fn cluster() -> Cluster {
    Cluster {
        uuid: "00000000-0000-4000-8000-000000000001".into(),
        name: "cluster-1".into(),
        project_id: "p1".into(),
        user_id: "user-p1".into(),
        cluster_template_id: "tmpl-uuid".into(),
        labels: Some(
            [("kube_tag", "v1.30.4"), ("boot_volume_size", "40")]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        ..Cluster::default()
    }
}

fn bench_get(c: &mut Criterion, name: &str, rt: &tokio::runtime::Runtime, db: &Db) {
    let mut cl = cluster();
    if let Err(e) = rt.block_on(async {
        upgrade(db).await?;
        db.q().create_cluster(&mut cl).await
    }) {
        eprintln!("{name}: set-up failed: {e}");
        return;
    }
    let scope = Scope::project("p1");
    c.bench_function(name, |b| {
        b.iter(|| {
            rt.block_on(db.q().get_cluster_by_uuid(&cl.uuid, &scope))
                .map(|c| c.id)
                .unwrap_or(-1)
        })
    });
}

fn get_cluster_by_uuid(c: &mut Criterion) {
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("tokio runtime: {e}");
            return;
        }
    };
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("temporary directory: {e}");
            return;
        }
    };
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    match rt.block_on(Db::open(&DbTarget::new(Dialect::Sqlite, url))) {
        Ok(db) => bench_get(c, "sqlite_get_cluster_by_uuid", &rt, &db),
        Err(e) => eprintln!("sqlite: {e}"),
    }

    let Ok(admin_url) = std::env::var("OKM_TEST_MYSQL_URL") else {
        eprintln!("OKM_TEST_MYSQL_URL not set: skipping the MariaDB benchmark");
        return;
    };
    let name = format!("okm_db_bench_{}", std::process::id());
    let admin = async |sql: String| -> Result<(), sqlx::Error> {
        let pool = sqlx::MySqlPool::connect(&admin_url).await?;
        pool.execute(sqlx::AssertSqlSafe(sql)).await?;
        pool.close().await;
        Ok(())
    };
    if let Err(e) = rt.block_on(admin(format!(
        "CREATE DATABASE {name} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"
    ))) {
        eprintln!("create the benchmark database: {e}");
        return;
    }
    let url = match url::Url::parse(&admin_url) {
        Ok(mut u) => {
            u.set_path(&format!("/{name}"));
            u.to_string()
        }
        Err(e) => {
            eprintln!("OKM_TEST_MYSQL_URL: {e}");
            return;
        }
    };
    match rt.block_on(Db::open(&DbTarget::new(Dialect::MySql, url))) {
        Ok(db) => {
            bench_get(c, "mysql_get_cluster_by_uuid", &rt, &db);
            rt.block_on(db.close());
        }
        Err(e) => eprintln!("mysql: {e}"),
    }
    if let Err(e) = rt.block_on(admin(format!("DROP DATABASE IF EXISTS {name}"))) {
        eprintln!("drop the benchmark database {name}: {e}");
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(5));
    targets = get_cluster_by_uuid
}
criterion_main!(benches);
