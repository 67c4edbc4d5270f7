-- Version 2: a secondary index on cluster.project_id, our one addition to
-- Magnum's schema (which has no secondary index). Every cluster create
-- counts the project's clusters for the quota, under the cluster lock, and
-- a project-scoped list filters on the column: without the index both read
-- the whole table. Python Magnum ignores the index; dropping it gives back
-- Magnum's exact schema (docs/compatibility.md).
CREATE INDEX okm_cluster0project_id ON cluster (project_id);
