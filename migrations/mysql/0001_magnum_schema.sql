-- Version 1: the Magnum 23.0.0 schema at Alembic head b3e1cf4a2d5e, as its
-- migrations leave it on MariaDB (table character sets included), plus the
-- alembic_version row so that Magnum can still open the database.

CREATE TABLE `alembic_version` (
  `version_num` varchar(32) NOT NULL,
  PRIMARY KEY (`version_num`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;

CREATE TABLE `cluster` (
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `uuid` varchar(36) DEFAULT NULL,
  `name` varchar(255) DEFAULT NULL,
  `cluster_template_id` varchar(255) DEFAULT NULL,
  `api_address` varchar(255) DEFAULT NULL,
  `stack_id` varchar(255) DEFAULT NULL,
  `project_id` varchar(255) DEFAULT NULL,
  `user_id` varchar(255) DEFAULT NULL,
  `status` varchar(20) DEFAULT NULL,
  `discovery_url` varchar(255) DEFAULT NULL,
  `status_reason` text DEFAULT NULL,
  `ca_cert_ref` varchar(512) DEFAULT NULL,
  `magnum_cert_ref` varchar(512) DEFAULT NULL,
  `create_timeout` int(11) DEFAULT NULL,
  `coe_version` varchar(255) DEFAULT NULL,
  `container_version` varchar(255) DEFAULT NULL,
  `keypair` varchar(255) DEFAULT NULL,
  `docker_volume_size` int(11) DEFAULT NULL,
  `labels` text DEFAULT NULL,
  `master_flavor_id` varchar(255) DEFAULT NULL,
  `flavor_id` varchar(255) DEFAULT NULL,
  `health_status` varchar(20) DEFAULT NULL,
  `health_status_reason` text DEFAULT NULL,
  `fixed_network` varchar(255) DEFAULT NULL,
  `fixed_subnet` varchar(255) DEFAULT NULL,
  `floating_ip_enabled` tinyint(1) DEFAULT NULL,
  `master_lb_enabled` tinyint(1) DEFAULT NULL,
  `etcd_ca_cert_ref` varchar(512) DEFAULT NULL,
  `front_proxy_ca_cert_ref` varchar(512) DEFAULT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uniq_bay0uuid` (`uuid`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci;

CREATE TABLE `cluster_template` (
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `uuid` varchar(36) DEFAULT NULL,
  `name` varchar(255) DEFAULT NULL,
  `flavor_id` varchar(255) DEFAULT NULL,
  `keypair_id` varchar(255) DEFAULT NULL,
  `image_id` varchar(255) DEFAULT NULL,
  `external_network_id` varchar(255) DEFAULT NULL,
  `dns_nameserver` varchar(255) DEFAULT NULL,
  `apiserver_port` int(11) DEFAULT NULL,
  `project_id` varchar(255) DEFAULT NULL,
  `user_id` varchar(255) DEFAULT NULL,
  `docker_volume_size` int(11) DEFAULT NULL,
  `fixed_network` varchar(255) DEFAULT NULL,
  `master_flavor_id` varchar(255) DEFAULT NULL,
  `cluster_distro` varchar(255) DEFAULT NULL,
  `coe` varchar(255) DEFAULT NULL,
  `http_proxy` varchar(255) DEFAULT NULL,
  `https_proxy` varchar(255) DEFAULT NULL,
  `no_proxy` varchar(255) DEFAULT NULL,
  `registry_enabled` tinyint(1) DEFAULT NULL,
  `network_driver` varchar(255) DEFAULT NULL,
  `labels` text DEFAULT NULL,
  `tls_disabled` tinyint(1) DEFAULT NULL,
  `public` tinyint(1) DEFAULT NULL,
  `server_type` varchar(255) DEFAULT 'vm',
  `volume_driver` varchar(255) DEFAULT NULL,
  `insecure_registry` varchar(255) DEFAULT NULL,
  `docker_storage_driver` varchar(512) DEFAULT NULL,
  `master_lb_enabled` tinyint(1) DEFAULT NULL,
  `fixed_subnet` varchar(255) DEFAULT NULL,
  `floating_ip_enabled` tinyint(1) DEFAULT NULL,
  `hidden` tinyint(1) DEFAULT NULL,
  `tags` varchar(255) DEFAULT NULL,
  `driver` varchar(255) DEFAULT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uniq_baymodel0uuid` (`uuid`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci;

CREATE TABLE `federation` (
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `project_id` varchar(255) DEFAULT NULL,
  `uuid` varchar(36) DEFAULT NULL,
  `name` varchar(255) DEFAULT NULL,
  `hostcluster_id` varchar(255) DEFAULT NULL,
  `member_ids` text DEFAULT NULL,
  `status` varchar(20) DEFAULT NULL,
  `status_reason` text DEFAULT NULL,
  `properties` text DEFAULT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uniq_federation0uuid` (`uuid`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;

CREATE TABLE `magnum_service` (
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `report_count` int(11) NOT NULL,
  `host` varchar(255) DEFAULT NULL,
  `binary` varchar(255) DEFAULT NULL,
  `disabled` tinyint(1) DEFAULT NULL,
  `disabled_reason` varchar(255) DEFAULT NULL,
  `last_seen_up` datetime DEFAULT NULL,
  `forced_down` tinyint(1) DEFAULT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uniq_magnum_service0host0binary` (`host`,`binary`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;

CREATE TABLE `nodegroup` (
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `uuid` varchar(36) NOT NULL,
  `name` varchar(255) NOT NULL,
  `cluster_id` varchar(255) NOT NULL,
  `project_id` varchar(255) NOT NULL,
  `docker_volume_size` int(11) DEFAULT NULL,
  `labels` text DEFAULT NULL,
  `flavor_id` varchar(255) DEFAULT NULL,
  `image_id` varchar(255) DEFAULT NULL,
  `node_addresses` text DEFAULT NULL,
  `node_count` int(11) DEFAULT NULL,
  `max_node_count` int(11) DEFAULT NULL,
  `min_node_count` int(11) DEFAULT NULL,
  `role` varchar(255) DEFAULT NULL,
  `is_default` tinyint(1) DEFAULT NULL,
  `stack_id` varchar(255) DEFAULT NULL,
  `status` varchar(20) DEFAULT NULL,
  `status_reason` text DEFAULT NULL,
  `version` varchar(20) DEFAULT NULL,
  `node_labels` text DEFAULT NULL,
  `node_taints` text DEFAULT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uniq_nodegroup0uuid` (`uuid`),
  UNIQUE KEY `uniq_nodegroup0cluster_id0name` (`cluster_id`,`name`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;

CREATE TABLE `quotas` (
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `project_id` varchar(255) DEFAULT NULL,
  `resource` varchar(255) DEFAULT NULL,
  `hard_limit` int(11) NOT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uniq_quotas0project_id0resource` (`project_id`,`resource`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci;

CREATE TABLE `x509keypair` (
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `uuid` varchar(36) DEFAULT NULL,
  `certificate` text DEFAULT NULL,
  `private_key` text DEFAULT NULL,
  `project_id` varchar(255) DEFAULT NULL,
  `user_id` varchar(255) DEFAULT NULL,
  `intermediates` text DEFAULT NULL,
  `private_key_passphrase` text DEFAULT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uniq_x509keypair0uuid` (`uuid`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci;

INSERT INTO `alembic_version` (`version_num`) VALUES ('b3e1cf4a2d5e');
