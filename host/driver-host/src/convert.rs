//! Conversion between `magnum_domain` rows and the WIT records of
//! `openkeel:magnum-driver@1.1.0` (a 1.0 component's records are the same
//! but for those `package::dispatch` maps).
//!
//! Towards the driver every column is copied. From the driver, every string
//! is charged to the call's output budget, so an answer larger than the
//! driver's limit is refused while it is converted; times must be valid
//! UTC microseconds and statuses Magnum's.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDateTime};
use magnum_domain::Status;
use magnum_domain::models::{Cluster, ClusterTemplate, NodeGroup, StringMap};

use crate::access::{KubeObject, ObjectRef, Selector};
use crate::bindings::v1_1::exports::openkeel::magnum_driver::lifecycle as wl;
use crate::bindings::v1_1::exports::openkeel::magnum_driver::status as ws;
use crate::bindings::v1_1::openkeel::magnum_driver::types as w;
use crate::types::{Effect, Observation, Resize, StatusAnswer, Target, Update, Upgrade};

/// Why an answer of a driver could not be taken.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Larger than the output limit.
    Oversized { limit: usize },
    /// Breaks the contract.
    Malformed(String),
}

/// What is left of a call's output limit, in bytes.
pub(crate) struct Budget {
    limit: usize,
    left: usize,
}

impl Budget {
    pub(crate) fn new(limit: usize) -> Self {
        Budget { limit, left: limit }
    }

    fn charge(&mut self, n: usize) -> Result<(), Refused> {
        // Every value costs at least a byte, so that a list of empty
        // strings is bounded too.
        let n = n.max(1);
        if n > self.left {
            return Err(Refused::Oversized { limit: self.limit });
        }
        self.left -= n;
        Ok(())
    }

    fn string(&mut self, s: String) -> Result<String, Refused> {
        self.charge(s.len())?;
        Ok(s)
    }

    fn opt(&mut self, s: Option<String>) -> Result<Option<String>, Refused> {
        s.map(|s| self.string(s)).transpose()
    }

    fn map(&mut self, m: Vec<(String, String)>) -> Result<StringMap, Refused> {
        let mut out = BTreeMap::new();
        for (k, v) in m {
            self.charge(k.len() + v.len())?;
            out.insert(k, v);
        }
        Ok(out)
    }

    fn list(&mut self, l: Vec<String>) -> Result<Vec<String>, Refused> {
        l.into_iter().map(|s| self.string(s)).collect()
    }

    pub(crate) fn pairs(
        &mut self,
        m: Vec<(String, String)>,
    ) -> Result<Vec<(String, String)>, Refused> {
        for (k, v) in &m {
            self.charge(k.len() + v.len())?;
        }
        Ok(m)
    }
}

/// A row time as UTC microseconds.
pub(crate) fn to_micros(t: NaiveDateTime) -> i64 {
    t.and_utc().timestamp_micros()
}

/// UTC microseconds as a row time.
pub(crate) fn from_micros(v: i64) -> Result<NaiveDateTime, Refused> {
    DateTime::from_timestamp_micros(v)
        .map(|d| d.naive_utc())
        .ok_or_else(|| Refused::Malformed(format!("time {v} is out of range")))
}

/// Declares `status_to` and `status_from` over the statuses both sides
/// name alike.
macro_rules! statuses {
    ($($status:ident),+ $(,)?) => {
        pub(crate) fn status_to(s: Status) -> w::Status {
            match s {
                $(Status::$status => w::Status::$status,)+
            }
        }

        pub(crate) fn status_from(s: w::Status) -> Status {
            match s {
                $(w::Status::$status => Status::$status,)+
            }
        }
    };
}

statuses!(
    CreateInProgress,
    CreateFailed,
    CreateComplete,
    UpdateInProgress,
    UpdateFailed,
    UpdateComplete,
    DeleteInProgress,
    DeleteFailed,
    DeleteComplete,
    ResumeComplete,
    ResumeFailed,
    RestoreComplete,
    RollbackInProgress,
    RollbackFailed,
    RollbackComplete,
    SnapshotComplete,
    CheckComplete,
    AdoptComplete,
);

/// A column of a row as its WIT record carries it: copied towards the
/// driver, and taken back from the driver's answer with every string
/// charged to the call's output budget.
trait Column: Sized {
    /// The column's WIT form.
    type Wit;
    /// The column as the driver gets it.
    fn lower(&self) -> Self::Wit;
    /// The column from the driver's answer.
    fn lift(w: Self::Wit, b: &mut Budget) -> Result<Self, Refused>;
}

/// Plain values cross as they are, free of charge.
macro_rules! plain_columns {
    ($($t:ty),+) => {$(
        impl Column for $t {
            type Wit = $t;
            fn lower(&self) -> $t {
                *self
            }
            fn lift(w: $t, _: &mut Budget) -> Result<$t, Refused> {
                Ok(w)
            }
        }
    )+};
}

plain_columns!(i64, i32, bool);

impl Column for String {
    type Wit = String;
    fn lower(&self) -> String {
        self.clone()
    }
    fn lift(w: String, b: &mut Budget) -> Result<String, Refused> {
        b.string(w)
    }
}

impl Column for StringMap {
    type Wit = w::StringMap;
    fn lower(&self) -> w::StringMap {
        self.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }
    fn lift(w: w::StringMap, b: &mut Budget) -> Result<StringMap, Refused> {
        b.map(w)
    }
}

impl Column for Status {
    type Wit = w::Status;
    fn lower(&self) -> w::Status {
        status_to(*self)
    }
    fn lift(w: w::Status, _: &mut Budget) -> Result<Status, Refused> {
        Ok(status_from(w))
    }
}

/// Times cross as UTC microseconds.
impl Column for NaiveDateTime {
    type Wit = i64;
    fn lower(&self) -> i64 {
        to_micros(*self)
    }
    fn lift(w: i64, _: &mut Budget) -> Result<NaiveDateTime, Refused> {
        from_micros(w)
    }
}

impl<T: Column> Column for Option<T> {
    type Wit = Option<T::Wit>;
    fn lower(&self) -> Option<T::Wit> {
        self.as_ref().map(T::lower)
    }
    fn lift(w: Option<T::Wit>, b: &mut Budget) -> Result<Self, Refused> {
        w.map(|v| T::lift(v, b)).transpose()
    }
}

impl<T: Column> Column for Vec<T> {
    type Wit = Vec<T::Wit>;
    fn lower(&self) -> Vec<T::Wit> {
        self.iter().map(T::lower).collect()
    }
    fn lift(w: Vec<T::Wit>, b: &mut Budget) -> Result<Self, Refused> {
        w.into_iter().map(|v| T::lift(v, b)).collect()
    }
}

/// Declares the conversions of a row and its WIT record, column by column
/// in the record's order (the order the driver's strings are charged in):
/// `$to` copies the row for the driver, `$from` takes the driver's record.
macro_rules! row_record {
    (
        $row:ident as w::$wit:ident,
        $(#[$to_attr:meta])* to: $to:ident,
        $(#[$from_attr:meta])* from: $from:ident,
        { $($col:ident),+ $(,)? }
    ) => {
        $(#[$to_attr])*
        pub(crate) fn $to(r: &$row) -> w::$wit {
            w::$wit {
                $($col: r.$col.lower(),)+
            }
        }

        $(#[$from_attr])*
        pub(crate) fn $from(r: w::$wit, b: &mut Budget) -> Result<$row, Refused> {
            Ok($row {
                $($col: Column::lift(r.$col, b)?,)+
            })
        }
    };
}

row_record!(
    ClusterTemplate as w::ClusterTemplate,
    to: template_to,
    #[cfg(test)]
    from: template_from,
    {
        id,
        uuid,
        name,
        project_id,
        user_id,
        flavor_id,
        master_flavor_id,
        keypair_id,
        image_id,
        external_network_id,
        fixed_network,
        fixed_subnet,
        network_driver,
        volume_driver,
        dns_nameserver,
        apiserver_port,
        docker_volume_size,
        docker_storage_driver,
        cluster_distro,
        coe,
        http_proxy,
        https_proxy,
        no_proxy,
        registry_enabled,
        labels,
        tls_disabled,
        public,
        server_type,
        insecure_registry,
        master_lb_enabled,
        floating_ip_enabled,
        hidden,
        tags,
        driver,
        created_at,
        updated_at,
    }
);

row_record!(
    Cluster as w::Cluster,
    #[cfg(test)]
    to: cluster_to,
    from: cluster_from,
    {
        id,
        uuid,
        name,
        project_id,
        user_id,
        cluster_template_id,
        keypair,
        docker_volume_size,
        labels,
        master_flavor_id,
        flavor_id,
        stack_id,
        api_address,
        status,
        status_reason,
        health_status,
        health_status_reason,
        create_timeout,
        discovery_url,
        coe_version,
        container_version,
        ca_cert_ref,
        magnum_cert_ref,
        etcd_ca_cert_ref,
        front_proxy_ca_cert_ref,
        fixed_network,
        fixed_subnet,
        floating_ip_enabled,
        master_lb_enabled,
        created_at,
        updated_at,
    }
);

row_record!(
    NodeGroup as w::Nodegroup,
    to: nodegroup_to,
    from: nodegroup_from,
    {
        id,
        uuid,
        name,
        cluster_id,
        project_id,
        docker_volume_size,
        labels,
        flavor_id,
        image_id,
        node_addresses,
        node_count,
        max_node_count,
        min_node_count,
        role,
        is_default,
        stack_id,
        status,
        status_reason,
        version,
        node_labels,
        node_taints,
        created_at,
        updated_at,
    }
);

#[cfg(test)]
pub(crate) fn state_to(st: &crate::types::ClusterState) -> w::ClusterState {
    w::ClusterState {
        cluster: cluster_to(&st.cluster),
        template: template_to(&st.template),
        nodegroups: st.nodegroups.iter().map(nodegroup_to).collect(),
    }
}

pub(crate) fn update_from(u: w::Update, b: &mut Budget) -> Result<Update, Refused> {
    Ok(Update {
        cluster: u.cluster.map(|c| cluster_from(c, b)).transpose()?,
        nodegroups: u
            .nodegroups
            .into_iter()
            .map(|n| nodegroup_from(n, b))
            .collect::<Result<_, _>>()?,
        deleted_nodegroups: b.list(u.deleted_nodegroups)?,
    })
}

pub(crate) fn status_answer_from(
    a: ws::StatusAnswer,
    b: &mut Budget,
) -> Result<StatusAnswer, Refused> {
    Ok(StatusAnswer {
        update: update_from(a.update, b)?,
        effects: a
            .effects
            .into_iter()
            .map(|e| {
                Ok(Effect {
                    name: b.string(e.name)?,
                    detail: b.string(e.detail)?,
                })
            })
            .collect::<Result<_, Refused>>()?,
    })
}

/// A resize as `lifecycle.resize-cluster` takes it.
pub(crate) fn resize_to(r: &Resize) -> wl::Resize {
    wl::Resize {
        nodegroup_uuid: r.nodegroup_uuid.clone(),
        node_count: r.node_count,
        nodes_to_remove: r.nodes_to_remove.clone(),
    }
}

/// An upgrade as `lifecycle.upgrade-cluster` takes it.
pub(crate) fn upgrade_to(u: &Upgrade) -> wl::Upgrade {
    wl::Upgrade {
        template: template_to(&u.template),
        max_batch_size: u.max_batch_size,
        nodegroup_uuid: u.nodegroup_uuid.clone(),
    }
}

pub(crate) fn effect_to(e: &Effect) -> ws::Effect {
    ws::Effect {
        name: e.name.clone(),
        detail: e.detail.clone(),
    }
}

pub(crate) fn observation_to(o: &Observation) -> ws::Observation {
    ws::Observation {
        selector: selector_to(&o.selector),
        served: o.served,
        synced: o.synced,
        objects: o.objects.iter().map(object_to).collect(),
    }
}

pub(crate) fn selector_to(s: &Selector) -> w::Selector {
    w::Selector {
        api_version: s.api_version.clone(),
        kind: s.kind.clone(),
        namespace: s.namespace.clone(),
        labels: s.labels.clone(),
    }
}

pub(crate) fn target_from(t: w::Target, b: &mut Budget) -> Result<Target, Refused> {
    Ok(Target {
        server_type: b.string(t.server_type)?,
        os: b.string(t.os)?,
        coe: b.string(t.coe)?,
    })
}

pub(crate) fn object_to(o: &KubeObject) -> w::K8sObject {
    w::K8sObject {
        api_version: o.api_version.clone(),
        kind: o.kind.clone(),
        namespace: o.namespace.clone(),
        name: o.name.clone(),
        json: o.json.clone(),
    }
}

pub(crate) fn object_from(o: w::K8sObject) -> KubeObject {
    KubeObject {
        api_version: o.api_version,
        kind: o.kind,
        namespace: o.namespace,
        name: o.name,
        json: o.json,
    }
}

pub(crate) fn ref_from(r: w::ObjectRef) -> ObjectRef {
    ObjectRef {
        api_version: r.api_version,
        kind: r.kind,
        namespace: r.namespace,
        name: r.name,
    }
}

pub(crate) fn selector_from(s: w::Selector, b: &mut Budget) -> Result<Selector, Refused> {
    Ok(Selector {
        api_version: b.string(s.api_version)?,
        kind: b.string(s.kind)?,
        namespace: b.opt(s.namespace)?,
        labels: b.pairs(s.labels)?,
    })
}

pub(crate) fn selector_to_plain(s: w::Selector) -> Selector {
    Selector {
        api_version: s.api_version,
        kind: s.kind,
        namespace: s.namespace,
        labels: s.labels,
    }
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDate;

    use super::*;
    use crate::types::ClusterState;

    fn at(us: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(2026, 11, 30)
            .and_then(|d| d.and_hms_micro_opt(14, 53, 7, us))
            .unwrap_or_default()
    }

    fn labels(pairs: &[(&str, &str)]) -> Option<StringMap> {
        Some(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    pub(crate) fn full_cluster() -> Cluster {
        Cluster {
            id: 7,
            uuid: "5d12f6fd-a196-4bf0-ae4c-1f639a523a52".into(),
            name: "c1".into(),
            project_id: "p1".into(),
            user_id: "u1".into(),
            cluster_template_id: "t1".into(),
            keypair: Some("kp".into()),
            docker_volume_size: Some(20),
            labels: labels(&[("kube_tag", "v1.30.4"), ("a", "")]),
            master_flavor_id: Some("m1.large".into()),
            flavor_id: Some("m1.small".into()),
            stack_id: Some("kube-abcde".into()),
            api_address: Some("https://10.0.0.1:6443".into()),
            status: Some(Status::UpdateInProgress),
            status_reason: Some("because".into()),
            health_status: Some("HEALTHY".into()),
            health_status_reason: labels(&[("api", "ok")]),
            create_timeout: Some(60),
            discovery_url: Some("https://discovery".into()),
            coe_version: Some("v1.30.4".into()),
            container_version: Some("1.7".into()),
            ca_cert_ref: Some("ca".into()),
            magnum_cert_ref: Some("mc".into()),
            etcd_ca_cert_ref: Some("etcd".into()),
            front_proxy_ca_cert_ref: Some("fp".into()),
            fixed_network: Some("net".into()),
            fixed_subnet: Some("sub".into()),
            floating_ip_enabled: Some(true),
            master_lb_enabled: Some(false),
            created_at: at(1),
            updated_at: Some(at(999_999)),
        }
    }

    fn full_template() -> ClusterTemplate {
        ClusterTemplate {
            id: 3,
            uuid: "t1".into(),
            name: "k8s".into(),
            project_id: "p1".into(),
            user_id: "u1".into(),
            flavor_id: Some("f".into()),
            master_flavor_id: Some("mf".into()),
            keypair_id: Some("kp".into()),
            image_id: Some("img".into()),
            external_network_id: Some("ext".into()),
            fixed_network: Some("fn".into()),
            fixed_subnet: Some("fs".into()),
            network_driver: Some("calico".into()),
            volume_driver: Some("cinder".into()),
            dns_nameserver: Some("8.8.8.8".into()),
            apiserver_port: Some(6443),
            docker_volume_size: Some(10),
            docker_storage_driver: Some("overlay2".into()),
            cluster_distro: Some("ubuntu".into()),
            coe: Some("kubernetes".into()),
            http_proxy: Some("http://p".into()),
            https_proxy: Some("https://p".into()),
            no_proxy: Some("localhost".into()),
            registry_enabled: Some(false),
            labels: labels(&[("kube_tag", "v1.30.4")]),
            tls_disabled: Some(false),
            public: Some(true),
            server_type: Some("vm".into()),
            insecure_registry: Some("reg".into()),
            master_lb_enabled: Some(true),
            floating_ip_enabled: Some(false),
            hidden: Some(false),
            tags: Some("a,b".into()),
            driver: Some("fake".into()),
            created_at: at(123_456),
            updated_at: None,
        }
    }

    fn full_nodegroup() -> NodeGroup {
        NodeGroup {
            id: 11,
            uuid: "ng1".into(),
            name: "default-worker".into(),
            cluster_id: "5d12f6fd-a196-4bf0-ae4c-1f639a523a52".into(),
            project_id: "p1".into(),
            docker_volume_size: None,
            labels: labels(&[]),
            flavor_id: Some("f".into()),
            image_id: Some("img".into()),
            node_addresses: Some(vec!["10.1.2.3".into(), "10.1.2.4".into()]),
            node_count: Some(2),
            max_node_count: None,
            min_node_count: Some(0),
            role: Some("worker".into()),
            is_default: Some(true),
            stack_id: Some("kube-abcde".into()),
            status: Some(Status::CreateComplete),
            status_reason: None,
            version: Some("v1.30.4".into()),
            node_labels: None,
            node_taints: Some(vec![
                [
                    ("key", "k"),
                    ("value", "v"),
                    ("effect", "NoSchedule"),
                    ("extra", "x"),
                ]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ]),
            created_at: at(0),
            updated_at: Some(at(42)),
        }
    }

    #[test]
    fn rows_round_trip_exactly() {
        let st = ClusterState {
            cluster: full_cluster(),
            template: full_template(),
            nodegroups: vec![full_nodegroup(), NodeGroup::default()],
        };
        let w = state_to(&st);
        let mut b = Budget::new(1 << 20);
        let back = Update {
            cluster: Some(cluster_from(w.cluster, &mut b).unwrap_or_default()),
            nodegroups: w
                .nodegroups
                .into_iter()
                .map(|n| nodegroup_from(n, &mut b).unwrap_or_default())
                .collect(),
            deleted_nodegroups: vec![],
        };
        let tmpl = template_from(w.template, &mut b);
        assert_eq!(back.cluster.as_ref(), Some(&st.cluster));
        assert_eq!(back.nodegroups, st.nodegroups);
        assert_eq!(tmpl, Ok(st.template));
    }

    #[test]
    fn updated_at_is_exact_to_the_microsecond() {
        for us in [0, 1, 999_999, 500_000] {
            let t = at(us);
            assert_eq!(from_micros(to_micros(t)), Ok(t));
        }
        let c = Cluster {
            updated_at: Some(at(654_321)),
            ..full_cluster()
        };
        let mut b = Budget::new(1 << 20);
        let back = cluster_from(cluster_to(&c), &mut b);
        assert_eq!(back.map(|c| c.updated_at), Ok(Some(at(654_321))));
    }

    #[test]
    fn a_time_out_of_range_is_malformed() {
        assert!(matches!(from_micros(i64::MAX), Err(Refused::Malformed(_))));
    }

    #[test]
    fn every_status_round_trips() {
        for s in Status::ALL {
            assert_eq!(status_from(status_to(*s)), *s);
        }
    }

    #[test]
    fn nil_and_empty_json_columns_stay_apart() {
        let mut ng = full_nodegroup();
        ng.labels = None;
        ng.node_addresses = Some(vec![]);
        let mut b = Budget::new(1 << 20);
        let back = nodegroup_from(nodegroup_to(&ng), &mut b);
        assert_eq!(back, Ok(ng));
    }

    #[test]
    fn the_budget_refuses_a_large_answer() {
        let mut c = full_cluster();
        c.status_reason = Some("x".repeat(2000));
        let mut b = Budget::new(1000);
        assert_eq!(
            cluster_from(cluster_to(&c), &mut b),
            Err(Refused::Oversized { limit: 1000 })
        );
    }
}
