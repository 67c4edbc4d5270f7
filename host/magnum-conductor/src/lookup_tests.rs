//! Tests of the OpenStack reads of a cluster create: run together, each
//! once, their errors in Magnum's order; and of the reads of a cluster
//! list page (three, whatever its size).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use futures::future::BoxFuture;
use magnum_domain::models::{Cluster, ClusterTemplate, NodeGroup, StringMap};
use magnum_domain::{MagnumError, RequestContext};
use tokio::sync::Notify;

use super::clusters::{ListReads, Read, check_flavors, list_page, validate_resources};
use super::openstack_reads::{Lookups, create_lookups};
use super::testing::{TestConductor, fake_template};
use super::{ClusterCreate, Error};
use crate::db::{ClusterFilter, ClusterView, ListOptions, Queries, Scope, TemplateScope};
use crate::openstack::{Flavor, Image, Keypair, Lookup, LookupError, Network, Subnet};

/// Answers every read only once `want` distinct reads have started (reads
/// made one after the other never finish), counts the reads, and fails
/// those named in `fail` with their message.
struct Gated {
    want: usize,
    fail: HashMap<String, MagnumError>,
    started: Mutex<HashMap<String, usize>>,
    open: Notify,
}

impl Gated {
    fn new(want: usize, fail: &[(&str, MagnumError)]) -> Gated {
        Gated {
            want,
            fail: fail
                .iter()
                .map(|(k, e)| (k.to_string(), e.clone()))
                .collect(),
            started: Mutex::default(),
            open: Notify::new(),
        }
    }

    fn started(&self) -> HashMap<String, usize> {
        self.started.lock().map(|s| s.clone()).unwrap_or_default()
    }

    async fn read(&self, kind: &str, ident: &str) -> Result<(), LookupError> {
        let key = format!("{kind}:{ident}");
        let opened = {
            let mut s = self.started.lock().expect("lock");
            *s.entry(key.clone()).or_default() += 1;
            s.len() >= self.want
        };
        if opened {
            self.open.notify_waiters();
        } else {
            // Registered before the check below, so no wake-up is lost.
            let wait = self.open.notified();
            tokio::pin!(wait);
            wait.as_mut().enable();
            if self.started().len() < self.want {
                wait.await;
            }
        }
        match self.fail.get(&key) {
            Some(e) => Err(LookupError::Client(e.clone())),
            None => Ok(()),
        }
    }
}

/// A [`Lookup`] method of [`Gated`]: it makes the read `kind` of its
/// argument, then answers with `found`, built from the argument.
macro_rules! gated_read {
    ($method:ident, $kind:literal, $ty:ident, |$arg:ident| $found:expr) => {
        fn $method<'a>(
            &'a self,
            _: &'a RequestContext,
            $arg: &'a str,
        ) -> BoxFuture<'a, Result<$ty, LookupError>> {
            Box::pin(async move {
                self.read($kind, $arg).await?;
                Ok($found)
            })
        }
    };
}

impl Lookup for Gated {
    gated_read!(image, "image", Image, |id| Image {
        id: id.into(),
        os_distro: Some("ubuntu".into()),
        ..Image::default()
    });
    gated_read!(flavor, "flavor", Flavor, |id| Flavor {
        id: id.into(),
        disk: 10,
        ..Flavor::default()
    });
    gated_read!(keypair, "keypair", Keypair, |name| Keypair {
        name: name.into(),
        ..Keypair::default()
    });
    gated_read!(external_network, "extnet", Network, |id| Network {
        id: id.into(),
        ..Network::default()
    });
    gated_read!(fixed_network, "net", Network, |id| Network {
        id: id.into(),
        ..Network::default()
    });
    gated_read!(fixed_subnet, "subnet", Subnet, |id| Subnet {
        id: id.into(),
        ..Subnet::default()
    });
}

fn fixture() -> (ClusterTemplate, Cluster) {
    let s = |v: &str| Some(v.to_string());
    let t = ClusterTemplate {
        image_id: s("img"),
        flavor_id: s("small"),
        master_flavor_id: s("big"),
        external_network_id: s("public"),
        fixed_network: s("private"),
        fixed_subnet: s("private-v4"),
        ..ClusterTemplate::default()
    };
    let cl = Cluster {
        flavor_id: s("small"),
        master_flavor_id: s("big"),
        keypair: s("ops-key"),
        labels: Some(StringMap::new()),
        ..Cluster::default()
    };
    (t, cl)
}

/// A create's OpenStack validation as the create runs it: prefetch, then
/// the checks in Magnum's order. Bounded: sequential reads never finish.
async fn validate(g: &Gated, t: &ClusterTemplate, cl: &Cluster) -> Result<(), Error> {
    let ctx = RequestContext::default();
    let run = async {
        let mut l = Lookups::new(g, &ctx);
        l.prefetch(&create_lookups(t, cl));
        check_flavors(&mut l, &cl.labels, [&cl.flavor_id, &cl.master_flavor_id]).await?;
        validate_resources(&mut l, t, cl).await
    };
    tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .unwrap_or_else(|_| panic!("the reads did not run together: {:?}", g.started()))
}

// Ports TestCreateLookupsRunTogether: the reads of a create's validation
// (the two flavors twice) are seven distinct reads, all in flight at once,
// each made once.
#[tokio::test]
async fn create_lookups_run_together() {
    let (t, cl) = fixture();
    // image, small, big, public, private, private-v4, ops-key
    let g = Gated::new(7, &[]);
    validate(&g, &t, &cl).await.expect("validation");
    let started = g.started();
    assert_eq!(started.len(), 7, "{started:?}");
    for (key, n) in started {
        assert_eq!(n, 1, "{key} read {n} times");
    }
}

// Ports TestCreateLookupsKeepMagnumOrder: when several reads fail, the
// error is the one Magnum's sequential validation meets first.
#[tokio::test]
async fn create_lookups_keep_magnum_order() {
    let flavor = MagnumError::flavor_not_found("big");
    let image = MagnumError::image_not_found("img");
    let key = MagnumError::key_pair_not_found("ops-key");
    type Case<'a> = (&'a str, Vec<(&'a str, MagnumError)>, &'a MagnumError);
    let cases: [Case<'_>; 3] = [
        (
            "root-disk flavors first",
            vec![
                ("flavor:big", flavor.clone()),
                ("image:img", image.clone()),
                ("keypair:ops-key", key.clone()),
            ],
            &flavor,
        ),
        (
            "image before keypair",
            vec![
                ("image:img", image.clone()),
                ("keypair:ops-key", key.clone()),
            ],
            &image,
        ),
        ("keypair last", vec![("keypair:ops-key", key.clone())], &key),
    ];
    for (name, fail, want) in cases {
        let (t, cl) = fixture();
        let g = Gated::new(7, &fail);
        match validate(&g, &t, &cl).await {
            Err(Error::Client(e)) => assert_eq!(&e, want, "{name}"),
            other => panic!("{name}: {other:?}"),
        }
    }
}

// Ports TestCreateLookupsBootVolume: with a boot volume the root-disk check
// reads nothing, and a null flavor is not looked up as "None".
#[test]
fn create_lookups_with_a_boot_volume() {
    let (mut t, mut cl) = fixture();
    cl.labels = Some(StringMap::from([("boot_volume_size".into(), "20".into())]));
    cl.master_flavor_id = None;
    t.master_flavor_id = None;
    let keys = create_lookups(&t, &cl);
    assert!(keys.iter().all(|k| k.ident != "None"), "{keys:?}");
    // image, flavor, two networks, subnet, keypair
    assert_eq!(keys.len(), 6, "{keys:?}");
}

/// Counts the reads of a cluster list.
struct Counting<'q> {
    q: Queries<'q>,
    calls: usize,
    /// Reads through the narrower list-view queries.
    views: usize,
}

impl ListReads for Counting<'_> {
    fn cluster<'a>(&'a mut self, uuid: &'a str, scope: &'a Scope) -> Read<'a, Cluster> {
        self.calls += 1;
        self.q.cluster(uuid, scope)
    }

    fn clusters<'a>(
        &'a mut self,
        f: &'a ClusterFilter,
        o: &'a ListOptions,
        view: Option<ClusterView>,
    ) -> Read<'a, Vec<Cluster>> {
        self.calls += 1;
        self.views += usize::from(view.is_some());
        self.q.clusters(f, o, view)
    }

    fn nodegroups<'a>(
        &'a mut self,
        clusters: &'a [String],
        view: Option<ClusterView>,
    ) -> Read<'a, HashMap<String, Vec<NodeGroup>>> {
        self.calls += 1;
        self.views += usize::from(view.is_some());
        self.q.nodegroups(clusters, view)
    }

    fn templates<'a>(
        &'a mut self,
        uuids: &'a [String],
        scope: &'a TemplateScope,
    ) -> Read<'a, HashMap<String, ClusterTemplate>> {
        self.calls += 1;
        self.q.templates(uuids, scope)
    }
}

// Ports TestClusterListQueryCount: a list page costs three reads
// (clusters, their nodegroups, their templates) whatever its size, with
// full rows and with the narrower reads of the list views — one template
// read for every distinct template of the page, not one per cluster.
#[tokio::test]
async fn a_cluster_list_page_costs_three_reads() {
    let t = TestConductor::new().await;
    let ctx = RequestContext {
        project_id: "p1".into(),
        user_id: "u1".into(),
        ..RequestContext::default()
    };
    let mut templates = Vec::new();
    for i in 0..3 {
        let mut tm = fake_template(&format!("7a0c2c1f-5e01-4c41-9d3a-00000000000{i}"), "t");
        t.db.q()
            .create_cluster_template(&mut tm)
            .await
            .expect("template");
        templates.push(tm);
    }
    // Rows only: what the list reads does not depend on the create job.
    for i in 0..12 {
        let tm: &ClusterTemplate = &templates[i % 3];
        let input = ClusterCreate {
            template: tm.clone(),
            master_count: 1,
            node_count: 1,
            ..ClusterCreate::default()
        };
        let mut cl = super::clusters::inherit(tm, &input);
        cl.uuid = t.conductor.new_uuid();
        cl.name = format!("c{i}");
        cl.project_id = "p1".into();
        cl.user_id = "u1".into();
        let (mut m, mut w) = super::clusters::default_nodegroups(tm, &cl, 1, 1);
        m.uuid = t.conductor.new_uuid();
        w.uuid = t.conductor.new_uuid();
        let mut q = t.db.q();
        q.create_cluster(&mut cl).await.expect("cluster");
        q.create_nodegroup(&mut m).await.expect("master");
        q.create_nodegroup(&mut w).await.expect("worker");
    }
    let cases: [(u64, Option<ClusterView>, usize); 7] = [
        (1, None, 0),
        (5, None, 0),
        (12, None, 0),
        (100, None, 0),
        (1, Some(ClusterView::Summary), 2),
        (12, Some(ClusterView::Summary), 2),
        (100, Some(ClusterView::Detail), 2),
    ];
    for (limit, view, view_reads) in cases {
        let mut counting = Counting {
            q: t.db.q(),
            calls: 0,
            views: 0,
        };
        let o = ListOptions {
            limit: Some(limit),
            sort_key: Some("id".into()),
            sort_dir: Some("asc".into()),
            ..ListOptions::default()
        };
        let page = list_page(&mut counting, &ctx, &o, view)
            .await
            .expect("list");
        assert_eq!(counting.views, view_reads, "limit {limit} {view:?}");
        assert_eq!(counting.calls, 3, "limit {limit} {view:?}");
        assert_eq!(page.clusters.len(), limit.min(12) as usize);
        for cl in &page.clusters {
            assert_eq!(page.nodegroups.get(&cl.uuid).map(Vec::len), Some(2));
            assert!(page.templates.contains_key(&cl.cluster_template_id));
        }
    }
}
