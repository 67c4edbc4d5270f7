package conductor

import (
	"context"
	"fmt"

	"github.com/openkeel/openkeel-magnum/internal/driver"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// RotateCredential replaces the cloud credential of a cluster through its
// driver. Like Magnum's RPC call, it is synchronous: a cluster outside the
// *_COMPLETE, UPDATE_IN_PROGRESS and UPDATE_FAILED statuses → 400
// NotSupported; a driver without rotation → 400 "Credential rotation is not
// supported by driver."; other driver errors are returned as they are. No
// status changes.
//
// Magnum: magnum/conductor/handlers/credential_conductor.py:26-58.
func (c *Conductor) RotateCredential(ctx context.Context, rc *magnum.RequestContext, cl *magnum.Cluster) error {
	var status magnum.Status
	if cl.Status != nil {
		status = *cl.Status
	}
	if !magnum.CanRotateCredential(status) {
		return magnum.CredentialRotationStatusNotSupported(status)
	}
	d, t, err := c.driverFor(ctx, cl)
	if err != nil {
		return err
	}
	st, err := c.clusterState(ctx, &c.DB.Queries, cl, t)
	if err != nil {
		return err
	}
	up, err := d.RotateCredential(ctx, driver.CredentialsFrom(rc), st)
	if err != nil {
		return err
	}
	if up.Changed() {
		if err := c.SaveDriverUpdate(ctx, up); err != nil {
			return fmt.Errorf("record credential rotation of %s: %w", cl.UUID, err)
		}
	}
	return nil
}
