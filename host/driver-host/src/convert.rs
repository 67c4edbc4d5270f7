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
use crate::bindings::v1_1::exports::openkeel::magnum_driver::status as ws;
use crate::bindings::v1_1::openkeel::magnum_driver::types as w;
use crate::types::{Effect, Observation, StatusAnswer, Target, Update};

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

    fn opt_map(&mut self, m: Option<Vec<(String, String)>>) -> Result<Option<StringMap>, Refused> {
        m.map(|m| self.map(m)).transpose()
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

fn map_to(m: &Option<StringMap>) -> Option<w::StringMap> {
    m.as_ref()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
}

pub(crate) fn status_to(s: Status) -> w::Status {
    match s {
        Status::CreateInProgress => w::Status::CreateInProgress,
        Status::CreateFailed => w::Status::CreateFailed,
        Status::CreateComplete => w::Status::CreateComplete,
        Status::UpdateInProgress => w::Status::UpdateInProgress,
        Status::UpdateFailed => w::Status::UpdateFailed,
        Status::UpdateComplete => w::Status::UpdateComplete,
        Status::DeleteInProgress => w::Status::DeleteInProgress,
        Status::DeleteFailed => w::Status::DeleteFailed,
        Status::DeleteComplete => w::Status::DeleteComplete,
        Status::ResumeComplete => w::Status::ResumeComplete,
        Status::ResumeFailed => w::Status::ResumeFailed,
        Status::RestoreComplete => w::Status::RestoreComplete,
        Status::RollbackInProgress => w::Status::RollbackInProgress,
        Status::RollbackFailed => w::Status::RollbackFailed,
        Status::RollbackComplete => w::Status::RollbackComplete,
        Status::SnapshotComplete => w::Status::SnapshotComplete,
        Status::CheckComplete => w::Status::CheckComplete,
        Status::AdoptComplete => w::Status::AdoptComplete,
    }
}

pub(crate) fn status_from(s: w::Status) -> Status {
    match s {
        w::Status::CreateInProgress => Status::CreateInProgress,
        w::Status::CreateFailed => Status::CreateFailed,
        w::Status::CreateComplete => Status::CreateComplete,
        w::Status::UpdateInProgress => Status::UpdateInProgress,
        w::Status::UpdateFailed => Status::UpdateFailed,
        w::Status::UpdateComplete => Status::UpdateComplete,
        w::Status::DeleteInProgress => Status::DeleteInProgress,
        w::Status::DeleteFailed => Status::DeleteFailed,
        w::Status::DeleteComplete => Status::DeleteComplete,
        w::Status::ResumeComplete => Status::ResumeComplete,
        w::Status::ResumeFailed => Status::ResumeFailed,
        w::Status::RestoreComplete => Status::RestoreComplete,
        w::Status::RollbackInProgress => Status::RollbackInProgress,
        w::Status::RollbackFailed => Status::RollbackFailed,
        w::Status::RollbackComplete => Status::RollbackComplete,
        w::Status::SnapshotComplete => Status::SnapshotComplete,
        w::Status::CheckComplete => Status::CheckComplete,
        w::Status::AdoptComplete => Status::AdoptComplete,
    }
}

pub(crate) fn template_to(t: &ClusterTemplate) -> w::ClusterTemplate {
    w::ClusterTemplate {
        id: t.id,
        uuid: t.uuid.clone(),
        name: t.name.clone(),
        project_id: t.project_id.clone(),
        user_id: t.user_id.clone(),
        flavor_id: t.flavor_id.clone(),
        master_flavor_id: t.master_flavor_id.clone(),
        keypair_id: t.keypair_id.clone(),
        image_id: t.image_id.clone(),
        external_network_id: t.external_network_id.clone(),
        fixed_network: t.fixed_network.clone(),
        fixed_subnet: t.fixed_subnet.clone(),
        network_driver: t.network_driver.clone(),
        volume_driver: t.volume_driver.clone(),
        dns_nameserver: t.dns_nameserver.clone(),
        apiserver_port: t.apiserver_port,
        docker_volume_size: t.docker_volume_size,
        docker_storage_driver: t.docker_storage_driver.clone(),
        cluster_distro: t.cluster_distro.clone(),
        coe: t.coe.clone(),
        http_proxy: t.http_proxy.clone(),
        https_proxy: t.https_proxy.clone(),
        no_proxy: t.no_proxy.clone(),
        registry_enabled: t.registry_enabled,
        labels: map_to(&t.labels),
        tls_disabled: t.tls_disabled,
        public: t.public,
        server_type: t.server_type.clone(),
        insecure_registry: t.insecure_registry.clone(),
        master_lb_enabled: t.master_lb_enabled,
        floating_ip_enabled: t.floating_ip_enabled,
        hidden: t.hidden,
        tags: t.tags.clone(),
        driver: t.driver.clone(),
        created_at: to_micros(t.created_at),
        updated_at: t.updated_at.map(to_micros),
    }
}

#[cfg(test)]
pub(crate) fn template_from(
    t: w::ClusterTemplate,
    b: &mut Budget,
) -> Result<ClusterTemplate, Refused> {
    Ok(ClusterTemplate {
        id: t.id,
        uuid: b.string(t.uuid)?,
        name: b.string(t.name)?,
        project_id: b.string(t.project_id)?,
        user_id: b.string(t.user_id)?,
        flavor_id: b.opt(t.flavor_id)?,
        master_flavor_id: b.opt(t.master_flavor_id)?,
        keypair_id: b.opt(t.keypair_id)?,
        image_id: b.opt(t.image_id)?,
        external_network_id: b.opt(t.external_network_id)?,
        fixed_network: b.opt(t.fixed_network)?,
        fixed_subnet: b.opt(t.fixed_subnet)?,
        network_driver: b.opt(t.network_driver)?,
        volume_driver: b.opt(t.volume_driver)?,
        dns_nameserver: b.opt(t.dns_nameserver)?,
        apiserver_port: t.apiserver_port,
        docker_volume_size: t.docker_volume_size,
        docker_storage_driver: b.opt(t.docker_storage_driver)?,
        cluster_distro: b.opt(t.cluster_distro)?,
        coe: b.opt(t.coe)?,
        http_proxy: b.opt(t.http_proxy)?,
        https_proxy: b.opt(t.https_proxy)?,
        no_proxy: b.opt(t.no_proxy)?,
        registry_enabled: t.registry_enabled,
        labels: b.opt_map(t.labels)?,
        tls_disabled: t.tls_disabled,
        public: t.public,
        server_type: b.opt(t.server_type)?,
        insecure_registry: b.opt(t.insecure_registry)?,
        master_lb_enabled: t.master_lb_enabled,
        floating_ip_enabled: t.floating_ip_enabled,
        hidden: t.hidden,
        tags: b.opt(t.tags)?,
        driver: b.opt(t.driver)?,
        created_at: from_micros(t.created_at)?,
        updated_at: t.updated_at.map(from_micros).transpose()?,
    })
}

#[cfg(test)]
pub(crate) fn cluster_to(c: &Cluster) -> w::Cluster {
    w::Cluster {
        id: c.id,
        uuid: c.uuid.clone(),
        name: c.name.clone(),
        project_id: c.project_id.clone(),
        user_id: c.user_id.clone(),
        cluster_template_id: c.cluster_template_id.clone(),
        keypair: c.keypair.clone(),
        docker_volume_size: c.docker_volume_size,
        labels: map_to(&c.labels),
        master_flavor_id: c.master_flavor_id.clone(),
        flavor_id: c.flavor_id.clone(),
        stack_id: c.stack_id.clone(),
        api_address: c.api_address.clone(),
        status: c.status.map(status_to),
        status_reason: c.status_reason.clone(),
        health_status: c.health_status.clone(),
        health_status_reason: map_to(&c.health_status_reason),
        create_timeout: c.create_timeout,
        discovery_url: c.discovery_url.clone(),
        coe_version: c.coe_version.clone(),
        container_version: c.container_version.clone(),
        ca_cert_ref: c.ca_cert_ref.clone(),
        magnum_cert_ref: c.magnum_cert_ref.clone(),
        etcd_ca_cert_ref: c.etcd_ca_cert_ref.clone(),
        front_proxy_ca_cert_ref: c.front_proxy_ca_cert_ref.clone(),
        fixed_network: c.fixed_network.clone(),
        fixed_subnet: c.fixed_subnet.clone(),
        floating_ip_enabled: c.floating_ip_enabled,
        master_lb_enabled: c.master_lb_enabled,
        created_at: to_micros(c.created_at),
        updated_at: c.updated_at.map(to_micros),
    }
}

pub(crate) fn cluster_from(c: w::Cluster, b: &mut Budget) -> Result<Cluster, Refused> {
    Ok(Cluster {
        id: c.id,
        uuid: b.string(c.uuid)?,
        name: b.string(c.name)?,
        project_id: b.string(c.project_id)?,
        user_id: b.string(c.user_id)?,
        cluster_template_id: b.string(c.cluster_template_id)?,
        keypair: b.opt(c.keypair)?,
        docker_volume_size: c.docker_volume_size,
        labels: b.opt_map(c.labels)?,
        master_flavor_id: b.opt(c.master_flavor_id)?,
        flavor_id: b.opt(c.flavor_id)?,
        stack_id: b.opt(c.stack_id)?,
        api_address: b.opt(c.api_address)?,
        status: c.status.map(status_from),
        status_reason: b.opt(c.status_reason)?,
        health_status: b.opt(c.health_status)?,
        health_status_reason: b.opt_map(c.health_status_reason)?,
        create_timeout: c.create_timeout,
        discovery_url: b.opt(c.discovery_url)?,
        coe_version: b.opt(c.coe_version)?,
        container_version: b.opt(c.container_version)?,
        ca_cert_ref: b.opt(c.ca_cert_ref)?,
        magnum_cert_ref: b.opt(c.magnum_cert_ref)?,
        etcd_ca_cert_ref: b.opt(c.etcd_ca_cert_ref)?,
        front_proxy_ca_cert_ref: b.opt(c.front_proxy_ca_cert_ref)?,
        fixed_network: b.opt(c.fixed_network)?,
        fixed_subnet: b.opt(c.fixed_subnet)?,
        floating_ip_enabled: c.floating_ip_enabled,
        master_lb_enabled: c.master_lb_enabled,
        created_at: from_micros(c.created_at)?,
        updated_at: c.updated_at.map(from_micros).transpose()?,
    })
}

pub(crate) fn nodegroup_to(n: &NodeGroup) -> w::Nodegroup {
    w::Nodegroup {
        id: n.id,
        uuid: n.uuid.clone(),
        name: n.name.clone(),
        cluster_id: n.cluster_id.clone(),
        project_id: n.project_id.clone(),
        docker_volume_size: n.docker_volume_size,
        labels: map_to(&n.labels),
        flavor_id: n.flavor_id.clone(),
        image_id: n.image_id.clone(),
        node_addresses: n.node_addresses.clone(),
        node_count: n.node_count,
        max_node_count: n.max_node_count,
        min_node_count: n.min_node_count,
        role: n.role.clone(),
        is_default: n.is_default,
        stack_id: n.stack_id.clone(),
        status: n.status.map(status_to),
        status_reason: n.status_reason.clone(),
        version: n.version.clone(),
        node_labels: map_to(&n.node_labels),
        node_taints: n.node_taints.as_ref().map(|ts| {
            ts.iter()
                .map(|t| t.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .collect()
        }),
        created_at: to_micros(n.created_at),
        updated_at: n.updated_at.map(to_micros),
    }
}

pub(crate) fn nodegroup_from(n: w::Nodegroup, b: &mut Budget) -> Result<NodeGroup, Refused> {
    Ok(NodeGroup {
        id: n.id,
        uuid: b.string(n.uuid)?,
        name: b.string(n.name)?,
        cluster_id: b.string(n.cluster_id)?,
        project_id: b.string(n.project_id)?,
        docker_volume_size: n.docker_volume_size,
        labels: b.opt_map(n.labels)?,
        flavor_id: b.opt(n.flavor_id)?,
        image_id: b.opt(n.image_id)?,
        node_addresses: n.node_addresses.map(|l| b.list(l)).transpose()?,
        node_count: n.node_count,
        max_node_count: n.max_node_count,
        min_node_count: n.min_node_count,
        role: b.opt(n.role)?,
        is_default: n.is_default,
        stack_id: b.opt(n.stack_id)?,
        status: n.status.map(status_from),
        status_reason: b.opt(n.status_reason)?,
        version: b.opt(n.version)?,
        node_labels: b.opt_map(n.node_labels)?,
        node_taints: n
            .node_taints
            .map(|ts| {
                ts.into_iter()
                    .map(|t| b.map(t))
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?,
        created_at: from_micros(n.created_at)?,
        updated_at: n.updated_at.map(from_micros).transpose()?,
    })
}

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
