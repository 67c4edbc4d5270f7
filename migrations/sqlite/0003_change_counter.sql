-- Version 3: the change counter of the list cache (docs/performance.md). Every
-- statement that inserts, updates or deletes a row of cluster, nodegroup or
-- cluster_template adds one to a row of openkeel_change, in the writer's own
-- transaction, whoever the writer is: this service's api, reconciler or
-- all-in-one, another process of it, or Python Magnum on the same database.
-- A list answer is served from a process's cache only while the sum of the
-- counters is the one it was read under. SQLite has one writer at a
-- time, so one counter row.
-- Python Magnum ignores the table; its writes fire the triggers like ours.
CREATE TABLE "openkeel_change" (
  "slot" INTEGER NOT NULL PRIMARY KEY,
  "n" INTEGER NOT NULL
);
INSERT INTO "openkeel_change" ("slot", "n") VALUES (0, 0);
CREATE TRIGGER "okm_cluster_ai" AFTER INSERT ON "cluster" BEGIN UPDATE "openkeel_change" SET "n" = "n" + 1; END;
CREATE TRIGGER "okm_cluster_au" AFTER UPDATE ON "cluster" BEGIN UPDATE "openkeel_change" SET "n" = "n" + 1; END;
CREATE TRIGGER "okm_cluster_ad" AFTER DELETE ON "cluster" BEGIN UPDATE "openkeel_change" SET "n" = "n" + 1; END;
CREATE TRIGGER "okm_nodegroup_ai" AFTER INSERT ON "nodegroup" BEGIN UPDATE "openkeel_change" SET "n" = "n" + 1; END;
CREATE TRIGGER "okm_nodegroup_au" AFTER UPDATE ON "nodegroup" BEGIN UPDATE "openkeel_change" SET "n" = "n" + 1; END;
CREATE TRIGGER "okm_nodegroup_ad" AFTER DELETE ON "nodegroup" BEGIN UPDATE "openkeel_change" SET "n" = "n" + 1; END;
CREATE TRIGGER "okm_cluster_template_ai" AFTER INSERT ON "cluster_template" BEGIN UPDATE "openkeel_change" SET "n" = "n" + 1; END;
CREATE TRIGGER "okm_cluster_template_au" AFTER UPDATE ON "cluster_template" BEGIN UPDATE "openkeel_change" SET "n" = "n" + 1; END;
CREATE TRIGGER "okm_cluster_template_ad" AFTER DELETE ON "cluster_template" BEGIN UPDATE "openkeel_change" SET "n" = "n" + 1; END;
