package conductor

// CreateJobHooks are the test hooks of the create job (createJobHooks);
// set them before StartCreateJobs and before any create.
type CreateJobHooks struct {
	BeforeJob, BeforeCertificates, BeforeSave, AfterJob, LockWaits func(uuid string)
}

// SetCreateJobHooks installs h.
func (c *Conductor) SetCreateJobHooks(h CreateJobHooks) {
	c.jobs.hooks = createJobHooks{beforeJob: h.BeforeJob, beforeCertificates: h.BeforeCertificates,
		beforeSave: h.BeforeSave, afterJob: h.AfterJob, lockWaits: h.LockWaits}
}

// CreateOrphanAge exposes clCreateOrphanAge.
const CreateOrphanAge = clCreateOrphanAge

// CreateJobsDropping reports whether StopCreateJobs ran out of time and
// the workers now drop the queued jobs.
func (c *Conductor) CreateJobsDropping() bool { return c.jobs.drop.Load() }
