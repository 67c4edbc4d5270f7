//! Nova server groups by name (`os-server-groups`, microversion 2.1: one
//! policy in `policies`).

use http::Method;
use serde::Deserialize;
use serde_json::json;

use super::clients::{EndpointSettings, path_segment};
use super::error::{ErrorKind, OpenStackError, SettingsError};
use super::session::{Caller, NOVA, Service, Session, Target, Who};

/// Finds, creates and deletes Nova server groups by name. Names are unique
/// per cluster (`<stack_id>` and `<stack_id>-<nodegroup>`), so a name
/// identifies a group. As the user, the user's groups are listed; with the
/// service credentials (the deletion of a cluster finishes in the
/// background), every project's (`all_projects`), as magnum-cluster-api
/// does with an admin context. Cheap to clone.
#[derive(Clone, Debug)]
pub struct ServerGroups {
    nova: Service,
}

#[derive(Deserialize)]
struct Group {
    id: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    project_id: Option<String>,
}

impl ServerGroups {
    /// `nova` is `[nova_client]`; nothing is contacted.
    pub fn new(session: Session, nova: EndpointSettings) -> Result<Self, SettingsError> {
        Ok(Self {
            nova: Service::new(session, &NOVA, nova)?,
        })
    }

    /// The group named `name`, if any. With all projects and a known
    /// project, groups of other projects are skipped.
    async fn find(
        &self,
        target: &Target,
        project_id: &str,
        name: &str,
    ) -> Result<Option<Group>, OpenStackError> {
        const CONTEXT: &str = "nova: list server groups";
        let mut url = format!("{}os-server-groups", target.base);
        if matches!(target.who, Who::Service) {
            url.push_str("?all_projects=true");
        }
        #[derive(Deserialize)]
        struct List {
            #[serde(default)]
            server_groups: Vec<Group>,
        }
        // Microversion 2.13: the groups carry their project, which the
        // service's listing of every project filters on.
        let mut headers = http::HeaderMap::new();
        headers.insert(
            "X-OpenStack-Nova-API-Version",
            http::HeaderValue::from_static("2.13"),
        );
        let list: List = self
            .nova
            .session()
            .send_with(&target.who, Method::GET, &url, None, &headers, CONTEXT)
            .await?
            .expect(&[200], CONTEXT)?
            .json(CONTEXT)?;
        let service = matches!(target.who, Who::Service);
        Ok(list.server_groups.into_iter().find(|g| {
            let p = g.project_id.as_deref().unwrap_or_default();
            let in_project = if service {
                // Every project's groups: only one shown to be the
                // project's is.
                project_id.is_empty() || p == project_id
            } else {
                // The caller's own groups.
                project_id.is_empty() || p.is_empty() || p == project_id
            };
            g.name.as_deref() == Some(name) && in_project
        }))
    }

    /// The id of the caller's server group named `name`, created with
    /// `policy` (affinity, anti-affinity, soft-affinity or
    /// soft-anti-affinity) when it does not exist.
    pub async fn ensure(
        &self,
        caller: &Caller,
        name: &str,
        policy: &str,
    ) -> Result<String, OpenStackError> {
        let context = format!("nova: create server group {name}");
        if name.is_empty() || policy.is_empty() {
            return Err(OpenStackError::new(
                context,
                ErrorKind::Invalid("a server group needs a name and a policy".to_owned()),
            ));
        }
        let target = self.nova.required(caller).await?;
        if let Some(g) = self.find(&target, &caller.project_id, name).await? {
            return Ok(g.id);
        }
        #[derive(Deserialize)]
        struct Created {
            server_group: Group,
        }
        let body = json!({"server_group": {"name": name, "policies": [policy]}});
        let created: Created = self
            .nova
            .session()
            .send(
                &target.who,
                Method::POST,
                &format!("{}os-server-groups", target.base),
                Some(&body),
                &context,
            )
            .await?
            .expect(&[200], &context)?
            .json(&context)?;
        Ok(created.server_group.id)
    }

    /// Removes the server group named `name`; one that does not exist is not
    /// an error.
    pub async fn delete(&self, caller: &Caller, name: &str) -> Result<(), OpenStackError> {
        let target = self.nova.required(caller).await?;
        let Some(g) = self.find(&target, &caller.project_id, name).await? else {
            return Ok(());
        };
        let context = format!("nova: delete server group {name}");
        self.nova
            .session()
            .send(
                &target.who,
                Method::DELETE,
                &format!("{}os-server-groups/{}", target.base, path_segment(&g.id)),
                None,
                &context,
            )
            .await?
            .expect(&[200, 202, 204, 404], &context)?;
        Ok(())
    }
}
