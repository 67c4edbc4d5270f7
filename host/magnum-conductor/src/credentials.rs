//! The rotation of a cluster's cloud credential
//! (`PATCH /v1/credentials`).
//!
//! Magnum: magnum/conductor/handlers/credential_conductor.py.

use magnum_domain::models::Cluster;
use magnum_domain::transitions::Operation;
use magnum_domain::{MagnumError, RequestContext};

use super::Conductor;
use super::clusters::{call_ctx, call_error};
use super::driver_answers::Call;
use super::error::Result;
use super::jobs::run_hook;

impl Conductor {
    /// Replaces the cloud credential of `cluster` through its driver,
    /// synchronously as Magnum's RPC call: a cluster outside the
    /// `*_COMPLETE`, UPDATE_IN_PROGRESS and UPDATE_FAILED statuses is 400
    /// `NotSupported`; a driver without rotation answers 400 `Credential
    /// rotation is not supported by driver.`; other driver failures are
    /// Magnum's error saying that the driver failed and why. No status
    /// changes; rows the driver changed are saved unless
    /// the cluster changed since they were read (a failure to save is
    /// logged: the driver has rotated already).
    pub async fn rotate_credential(&self, ctx: &RequestContext, cluster: &Cluster) -> Result<()> {
        let st = self.cluster_state(&cluster.uuid).await?;
        match st.cluster.status {
            Some(s) if s.can_rotate_credential() => {}
            Some(s) => return Err(MagnumError::credential_rotation_status_not_supported(s).into()),
            None => {
                return Err(MagnumError::not_supported(
                    "magnum.conductor.handlers.credential_conductor when cluster status is \"None\"",
                )
                .into());
            }
        }
        let driver = self.driver_of(&st.template)?;
        let answer = driver.rotate_credential(&call_ctx(ctx), &st).await;
        let call = Call::new(Operation::RotateCredential, "rotate-credential");
        let upd = self
            .gate(&driver, call, &st, answer)
            .map_err(|e| call_error(&driver, e))?;
        // Compare-and-swap: a cluster deleted or updated meanwhile keeps
        // what was written since `st` was read (only the driver's cluster
        // id is kept).
        run_hook(&self.hooks().before_rotation_save, &st.cluster.uuid).await;
        self.save_answer(&st, upd).await;
        tracing::info!(cluster_uuid = %cluster.uuid, "cluster credential rotated");
        Ok(())
    }
}
