//! Octavia load balancers (list by project, cascade delete) and the Neutron
//! floating IPs of their VIP ports, for the cleanup before a cluster's
//! deletion (magnum-cluster-api's pre-delete).

use std::ops::ControlFlow;

use http::Method;
use serde::{Deserialize, Deserializer};

use super::clients::{EndpointSettings, Link, Listing, Walk, encode_query, path_segment};
use super::error::{ErrorKind, OpenStackError, SettingsError};
use super::session::{Caller, NEUTRON, OCTAVIA, Resolved, Service, Session, Target};

/// The pages of one load-balancer list at most.
const MAX_LOAD_BALANCER_PAGES: usize = 100;

/// A string that may be null.
fn nullable<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

/// An Octavia v2 load balancer, with the fields the cleanup of a cluster
/// reads.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct LoadBalancer {
    #[serde(default, deserialize_with = "nullable")]
    pub id: String,
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    #[serde(default, deserialize_with = "nullable")]
    pub description: String,
    #[serde(default, deserialize_with = "nullable")]
    pub project_id: String,
    #[serde(default, deserialize_with = "nullable")]
    pub provisioning_status: String,
    #[serde(default, deserialize_with = "nullable")]
    pub operating_status: String,
    #[serde(default, deserialize_with = "nullable")]
    pub vip_port_id: String,
    #[serde(default, deserialize_with = "nullable")]
    pub vip_address: String,
    #[serde(default, deserialize_with = "nullable_list")]
    pub tags: Vec<String>,
}

fn nullable_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(Option::<Vec<String>>::deserialize(d)?.unwrap_or_default())
}

/// A Neutron floating IP.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct FloatingIp {
    #[serde(default, deserialize_with = "nullable")]
    pub id: String,
    #[serde(default, deserialize_with = "nullable")]
    pub floating_ip_address: String,
    /// Empty when the floating IP is not associated.
    #[serde(default, deserialize_with = "nullable")]
    pub port_id: String,
    #[serde(default, deserialize_with = "nullable")]
    pub project_id: String,
    #[serde(default, deserialize_with = "nullable")]
    pub description: String,
}

/// Lists and deletes Octavia load balancers and the Neutron floating IPs of
/// their VIP ports, as the caller (its token and catalog) or, without a
/// token, with the service credentials. Cheap to clone.
#[derive(Clone, Debug)]
pub struct LoadBalancers {
    octavia: Service,
    neutron: Service,
}

impl LoadBalancers {
    /// `octavia` is `[octavia_client]`, `neutron` `[neutron_client]`;
    /// nothing is contacted.
    pub fn new(
        session: Session,
        octavia: EndpointSettings,
        neutron: EndpointSettings,
    ) -> Result<Self, SettingsError> {
        Ok(Self {
            octavia: Service::new(session.clone(), &OCTAVIA, octavia)?,
            neutron: Service::new(session, &NEUTRON, neutron)?,
        })
    }

    /// The Octavia endpoint, or [`ErrorKind::NoLoadBalancerService`] when
    /// the catalog has none.
    async fn octavia(&self, caller: &Caller, context: &str) -> Result<Target, OpenStackError> {
        self.octavia
            .optional(caller)
            .await?
            .ok_or_else(|| OpenStackError::new(context, ErrorKind::NoLoadBalancerService))
    }

    /// The load balancers of `project_id` (`GET
    /// /v2/lbaas/loadbalancers?project_id=…`, following the
    /// `loadbalancers_links` next links). Load balancers of other projects
    /// that Octavia might still return are dropped.
    pub async fn list(
        &self,
        caller: &Caller,
        project_id: &str,
    ) -> Result<Vec<LoadBalancer>, OpenStackError> {
        const CONTEXT: &str = "octavia: list load balancers";
        if project_id.is_empty() {
            return Err(OpenStackError::new(
                CONTEXT,
                ErrorKind::Invalid("listing load balancers needs a project".to_owned()),
            ));
        }
        let target = self.octavia(caller, CONTEXT).await?;
        let session = self.octavia.session();
        let collection = format!("{}lbaas/loadbalancers", target.base);
        #[derive(Deserialize)]
        struct Page {
            #[serde(default)]
            loadbalancers: Vec<LoadBalancer>,
            #[serde(default)]
            loadbalancers_links: Option<Vec<Link>>,
        }
        let listing = Listing {
            first: format!(
                "{collection}?{}",
                encode_query(&[("project_id", project_id)])
            ),
            collection: &collection,
            max_pages: MAX_LOAD_BALANCER_PAGES,
            context: CONTEXT,
        };
        let mut out = Vec::new();
        let walk = listing
            .walk(
                |url| session.get(&target.who, url, CONTEXT),
                |page: Page| {
                    Ok((
                        page.loadbalancers,
                        page.loadbalancers_links.unwrap_or_default(),
                    ))
                },
                |lbs| {
                    out.extend(lbs.into_iter().filter(|lb| lb.project_id == project_id));
                    ControlFlow::<()>::Continue(())
                },
            )
            .await?;
        match walk {
            Walk::Truncated => Err(OpenStackError::new(
                CONTEXT,
                ErrorKind::Decode(format!("more than {MAX_LOAD_BALANCER_PAGES} pages")),
            )),
            Walk::Done | Walk::Stopped(()) => Ok(out),
        }
    }

    /// Cascade-deletes the load balancer `id` (`DELETE
    /// /v2/lbaas/loadbalancers/{id}?cascade=true`: its listeners, pools,
    /// members and health monitors go with it). One that is gone (404) is
    /// not an error, nor is one Octavia cannot change now (409: it is being
    /// created, updated or already deleted); the caller lists again and
    /// retries until it is gone.
    pub async fn delete(&self, caller: &Caller, id: &str) -> Result<(), OpenStackError> {
        let context = format!("octavia: delete load balancer {id}");
        if id.is_empty() {
            return Err(OpenStackError::new(
                context,
                ErrorKind::Invalid("deleting a load balancer needs its id".to_owned()),
            ));
        }
        let target = self.octavia(caller, &context).await?;
        let url = format!(
            "{}lbaas/loadbalancers/{}?cascade=true",
            target.base,
            path_segment(id)
        );
        self.octavia
            .session()
            .send(&target.who, Method::DELETE, &url, None, &context)
            .await?
            .expect(&[200, 202, 204, 404, 409], &context)?;
        Ok(())
    }

    /// Deletes the floating IPs bound to `port_id` (`GET
    /// /v2.0/floatingips?port_id=…`, then `DELETE /v2.0/floatingips/{id}`)
    /// and returns their addresses. Floating IPs already gone are skipped.
    pub async fn delete_floating_ips(
        &self,
        caller: &Caller,
        port_id: &str,
    ) -> Result<Vec<String>, OpenStackError> {
        if port_id.is_empty() {
            return Ok(Vec::new());
        }
        let context = format!("neutron: list floating IPs of port {port_id}");
        let target = match self.neutron.target(caller).await? {
            Resolved::Found(t) => t,
            Resolved::Missing(m) => {
                return Err(OpenStackError::new(context, ErrorKind::Endpoint(m)));
            }
        };
        let session = self.neutron.session();
        #[derive(Deserialize)]
        struct List {
            #[serde(default)]
            floatingips: Vec<FloatingIp>,
        }
        let url = format!(
            "{}floatingips?{}",
            target.base,
            encode_query(&[("port_id", port_id)])
        );
        let list: List = session
            .get(&target.who, url, &context)
            .await?
            .expect(&[200], &context)?
            .json(&context)?;
        let mut deleted = Vec::new();
        // A Neutron that ignored the filter lists other ports' too.
        for fip in list
            .floatingips
            .into_iter()
            .filter(|f| f.port_id == port_id)
        {
            let context = format!("neutron: delete floating IP {}", fip.id);
            session
                .send(
                    &target.who,
                    Method::DELETE,
                    &format!("{}floatingips/{}", target.base, path_segment(&fip.id)),
                    None,
                    &context,
                )
                .await?
                .expect(&[200, 202, 204, 404], &context)?;
            deleted.push(fip.floating_ip_address);
        }
        Ok(deleted)
    }
}
