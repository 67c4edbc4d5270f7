-- Version 3: the change counter of the list cache (docs/performance.md). Every
-- statement that inserts, updates or deletes a row of cluster, nodegroup or
-- cluster_template adds one to a row of openkeel_change, in the writer's own
-- transaction, whoever the writer is: this service's api, reconciler or
-- all-in-one, another process of it, or Python Magnum on the same database.
-- A list answer is served from a process's cache only while the sum of the
-- counters is the one it was read under. The row a statement counts on is
-- its backend's (pg_backend_pid() modulo 64), so that concurrent writers
-- rarely wait on one another's counter; the triggers fire once a statement.
-- Python Magnum ignores the table; its writes fire the triggers like ours.
CREATE TABLE openkeel_change (
  slot integer NOT NULL PRIMARY KEY,
  n bigint NOT NULL
);
INSERT INTO openkeel_change (slot, n) SELECT s, 0 FROM generate_series(0, 63) AS s;
CREATE FUNCTION okm_count_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE openkeel_change SET n = n + 1 WHERE slot = pg_backend_pid() % 64; RETURN NULL; END $$;
CREATE TRIGGER okm_cluster_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON cluster FOR EACH STATEMENT EXECUTE FUNCTION okm_count_change();
CREATE TRIGGER okm_nodegroup_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON nodegroup FOR EACH STATEMENT EXECUTE FUNCTION okm_count_change();
CREATE TRIGGER okm_cluster_template_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON cluster_template FOR EACH STATEMENT EXECUTE FUNCTION okm_count_change();
