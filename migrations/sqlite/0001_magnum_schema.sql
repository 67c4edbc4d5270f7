-- Version 1: the Magnum 23.0.0 schema at Alembic head b3e1cf4a2d5e for SQLite.
-- Same tables, columns, nullability and unique constraints as on MariaDB;
-- name columns use NOCASE so name lookups and the nodegroup (cluster_id, name)
-- constraint ignore case as MariaDB's *_general_ci collations do.

CREATE TABLE "alembic_version" (
  "version_num" VARCHAR(32) NOT NULL,
  CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)
);

CREATE TABLE "cluster" (
  "created_at" DATETIME,
  "updated_at" DATETIME,
  "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  "uuid" VARCHAR(36),
  "name" VARCHAR(255) COLLATE NOCASE,
  "cluster_template_id" VARCHAR(255),
  "api_address" VARCHAR(255),
  "stack_id" VARCHAR(255),
  "project_id" VARCHAR(255),
  "user_id" VARCHAR(255),
  "status" VARCHAR(20),
  "discovery_url" VARCHAR(255),
  "status_reason" TEXT,
  "ca_cert_ref" VARCHAR(512),
  "magnum_cert_ref" VARCHAR(512),
  "create_timeout" INTEGER,
  "coe_version" VARCHAR(255),
  "container_version" VARCHAR(255),
  "keypair" VARCHAR(255),
  "docker_volume_size" INTEGER,
  "labels" TEXT,
  "master_flavor_id" VARCHAR(255),
  "flavor_id" VARCHAR(255),
  "health_status" VARCHAR(20),
  "health_status_reason" TEXT,
  "fixed_network" VARCHAR(255),
  "fixed_subnet" VARCHAR(255),
  "floating_ip_enabled" BOOLEAN,
  "master_lb_enabled" BOOLEAN,
  "etcd_ca_cert_ref" VARCHAR(512),
  "front_proxy_ca_cert_ref" VARCHAR(512),
  CONSTRAINT uniq_bay0uuid UNIQUE ("uuid")
);

CREATE TABLE "cluster_template" (
  "created_at" DATETIME,
  "updated_at" DATETIME,
  "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  "uuid" VARCHAR(36),
  "name" VARCHAR(255) COLLATE NOCASE,
  "flavor_id" VARCHAR(255),
  "keypair_id" VARCHAR(255),
  "image_id" VARCHAR(255),
  "external_network_id" VARCHAR(255),
  "dns_nameserver" VARCHAR(255),
  "apiserver_port" INTEGER,
  "project_id" VARCHAR(255),
  "user_id" VARCHAR(255),
  "docker_volume_size" INTEGER,
  "fixed_network" VARCHAR(255),
  "master_flavor_id" VARCHAR(255),
  "cluster_distro" VARCHAR(255),
  "coe" VARCHAR(255),
  "http_proxy" VARCHAR(255),
  "https_proxy" VARCHAR(255),
  "no_proxy" VARCHAR(255),
  "registry_enabled" BOOLEAN,
  "network_driver" VARCHAR(255),
  "labels" TEXT,
  "tls_disabled" BOOLEAN,
  "public" BOOLEAN,
  "server_type" VARCHAR(255) DEFAULT 'vm',
  "volume_driver" VARCHAR(255),
  "insecure_registry" VARCHAR(255),
  "docker_storage_driver" VARCHAR(512),
  "master_lb_enabled" BOOLEAN,
  "fixed_subnet" VARCHAR(255),
  "floating_ip_enabled" BOOLEAN,
  "hidden" BOOLEAN,
  "tags" VARCHAR(255),
  "driver" VARCHAR(255),
  CONSTRAINT uniq_baymodel0uuid UNIQUE ("uuid")
);

CREATE TABLE "federation" (
  "created_at" DATETIME,
  "updated_at" DATETIME,
  "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  "project_id" VARCHAR(255),
  "uuid" VARCHAR(36),
  "name" VARCHAR(255) COLLATE NOCASE,
  "hostcluster_id" VARCHAR(255),
  "member_ids" TEXT,
  "status" VARCHAR(20),
  "status_reason" TEXT,
  "properties" TEXT,
  CONSTRAINT uniq_federation0uuid UNIQUE ("uuid")
);

CREATE TABLE "magnum_service" (
  "created_at" DATETIME,
  "updated_at" DATETIME,
  "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  "report_count" INTEGER NOT NULL,
  "host" VARCHAR(255),
  "binary" VARCHAR(255),
  "disabled" BOOLEAN,
  "disabled_reason" VARCHAR(255),
  "last_seen_up" DATETIME,
  "forced_down" BOOLEAN,
  CONSTRAINT uniq_magnum_service0host0binary UNIQUE ("host","binary")
);

CREATE TABLE "nodegroup" (
  "created_at" DATETIME,
  "updated_at" DATETIME,
  "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  "uuid" VARCHAR(36) NOT NULL,
  "name" VARCHAR(255) NOT NULL COLLATE NOCASE,
  "cluster_id" VARCHAR(255) NOT NULL,
  "project_id" VARCHAR(255) NOT NULL,
  "docker_volume_size" INTEGER,
  "labels" TEXT,
  "flavor_id" VARCHAR(255),
  "image_id" VARCHAR(255),
  "node_addresses" TEXT,
  "node_count" INTEGER,
  "max_node_count" INTEGER,
  "min_node_count" INTEGER,
  "role" VARCHAR(255),
  "is_default" BOOLEAN,
  "stack_id" VARCHAR(255),
  "status" VARCHAR(20),
  "status_reason" TEXT,
  "version" VARCHAR(20),
  "node_labels" TEXT,
  "node_taints" TEXT,
  CONSTRAINT uniq_nodegroup0uuid UNIQUE ("uuid"),
  CONSTRAINT uniq_nodegroup0cluster_id0name UNIQUE ("cluster_id","name")
);

CREATE TABLE "quotas" (
  "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  "created_at" DATETIME,
  "updated_at" DATETIME,
  "project_id" VARCHAR(255),
  "resource" VARCHAR(255),
  "hard_limit" INTEGER NOT NULL,
  CONSTRAINT uniq_quotas0project_id0resource UNIQUE ("project_id","resource")
);

CREATE TABLE "x509keypair" (
  "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  "created_at" DATETIME,
  "updated_at" DATETIME,
  "uuid" VARCHAR(36),
  "certificate" TEXT,
  "private_key" TEXT,
  "project_id" VARCHAR(255),
  "user_id" VARCHAR(255),
  "intermediates" TEXT,
  "private_key_passphrase" TEXT,
  CONSTRAINT uniq_x509keypair0uuid UNIQUE ("uuid")
);

INSERT INTO alembic_version (version_num) VALUES ('b3e1cf4a2d5e');
