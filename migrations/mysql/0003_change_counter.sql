-- Version 3: the change counter of the list cache (docs/performance.md). Every
-- statement that inserts, updates or deletes a row of cluster, nodegroup or
-- cluster_template adds one to a row of openkeel_change, in the writer's own
-- transaction, whoever the writer is: this service's api, reconciler or
-- all-in-one, another process of it, or Python Magnum on the same database.
-- A list answer is served from a process's cache only while the sum of the
-- counters is the one it was read under. The row a statement counts on is
-- its connection's (CONNECTION_ID() modulo 64), so that concurrent writers
-- rarely wait on one another's counter and a transaction holds one counter
-- row only. With binary logging on, creating triggers needs the SUPER
-- privilege or log_bin_trust_function_creators = 1 (docs/operators.md).
-- MariaDB commits each of these statements on its own, so each may run
-- again: an upgrade stopped halfway (say, refused a trigger) completes when
-- run again.
-- Python Magnum ignores the table; its writes fire the triggers like ours.
CREATE TABLE IF NOT EXISTS `openkeel_change` (
  `slot` int(11) NOT NULL,
  `n` bigint(20) NOT NULL,
  PRIMARY KEY (`slot`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci;
INSERT IGNORE INTO `openkeel_change` (`slot`, `n`) VALUES (0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (6, 0), (7, 0), (8, 0), (9, 0), (10, 0), (11, 0), (12, 0), (13, 0), (14, 0), (15, 0), (16, 0), (17, 0), (18, 0), (19, 0), (20, 0), (21, 0), (22, 0), (23, 0), (24, 0), (25, 0), (26, 0), (27, 0), (28, 0), (29, 0), (30, 0), (31, 0), (32, 0), (33, 0), (34, 0), (35, 0), (36, 0), (37, 0), (38, 0), (39, 0), (40, 0), (41, 0), (42, 0), (43, 0), (44, 0), (45, 0), (46, 0), (47, 0), (48, 0), (49, 0), (50, 0), (51, 0), (52, 0), (53, 0), (54, 0), (55, 0), (56, 0), (57, 0), (58, 0), (59, 0), (60, 0), (61, 0), (62, 0), (63, 0);
CREATE TRIGGER IF NOT EXISTS `okm_cluster_ai` AFTER INSERT ON `cluster` FOR EACH ROW UPDATE `openkeel_change` SET `n` = `n` + 1 WHERE `slot` = CONNECTION_ID() % 64;
CREATE TRIGGER IF NOT EXISTS `okm_cluster_au` AFTER UPDATE ON `cluster` FOR EACH ROW UPDATE `openkeel_change` SET `n` = `n` + 1 WHERE `slot` = CONNECTION_ID() % 64;
CREATE TRIGGER IF NOT EXISTS `okm_cluster_ad` AFTER DELETE ON `cluster` FOR EACH ROW UPDATE `openkeel_change` SET `n` = `n` + 1 WHERE `slot` = CONNECTION_ID() % 64;
CREATE TRIGGER IF NOT EXISTS `okm_nodegroup_ai` AFTER INSERT ON `nodegroup` FOR EACH ROW UPDATE `openkeel_change` SET `n` = `n` + 1 WHERE `slot` = CONNECTION_ID() % 64;
CREATE TRIGGER IF NOT EXISTS `okm_nodegroup_au` AFTER UPDATE ON `nodegroup` FOR EACH ROW UPDATE `openkeel_change` SET `n` = `n` + 1 WHERE `slot` = CONNECTION_ID() % 64;
CREATE TRIGGER IF NOT EXISTS `okm_nodegroup_ad` AFTER DELETE ON `nodegroup` FOR EACH ROW UPDATE `openkeel_change` SET `n` = `n` + 1 WHERE `slot` = CONNECTION_ID() % 64;
CREATE TRIGGER IF NOT EXISTS `okm_cluster_template_ai` AFTER INSERT ON `cluster_template` FOR EACH ROW UPDATE `openkeel_change` SET `n` = `n` + 1 WHERE `slot` = CONNECTION_ID() % 64;
CREATE TRIGGER IF NOT EXISTS `okm_cluster_template_au` AFTER UPDATE ON `cluster_template` FOR EACH ROW UPDATE `openkeel_change` SET `n` = `n` + 1 WHERE `slot` = CONNECTION_ID() % 64;
CREATE TRIGGER IF NOT EXISTS `okm_cluster_template_ad` AFTER DELETE ON `cluster_template` FOR EACH ROW UPDATE `openkeel_change` SET `n` = `n` + 1 WHERE `slot` = CONNECTION_ID() % 64;
