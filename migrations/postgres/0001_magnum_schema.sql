-- Version 1: the Magnum 23.0.0 schema at Alembic head b3e1cf4a2d5e, as its
-- migrations leave it on PostgreSQL (legacy bay/baymodel sequence and key
-- names and the unused docker_storage_driver enum type included), plus the
-- alembic_version row so that Magnum can still open the database.
CREATE TYPE docker_storage_driver AS ENUM (
    'devicemapper',
    'overlay'
);

CREATE TABLE alembic_version (
    version_num character varying(32) NOT NULL
);

CREATE TABLE cluster (
    created_at timestamp without time zone,
    updated_at timestamp without time zone,
    id integer NOT NULL,
    uuid character varying(36),
    name character varying(255),
    cluster_template_id character varying(255),
    api_address character varying(255),
    stack_id character varying(255),
    project_id character varying(255),
    user_id character varying(255),
    status character varying(20),
    discovery_url character varying(255),
    status_reason text,
    ca_cert_ref character varying(512),
    magnum_cert_ref character varying(512),
    create_timeout integer,
    coe_version character varying(255),
    container_version character varying(255),
    keypair character varying(255),
    docker_volume_size integer,
    labels text,
    master_flavor_id character varying(255),
    flavor_id character varying(255),
    health_status character varying(20),
    health_status_reason text,
    fixed_network character varying(255),
    fixed_subnet character varying(255),
    floating_ip_enabled boolean,
    master_lb_enabled boolean,
    etcd_ca_cert_ref character varying(512),
    front_proxy_ca_cert_ref character varying(512)
);

CREATE SEQUENCE bay_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE bay_id_seq OWNED BY cluster.id;

CREATE TABLE cluster_template (
    created_at timestamp without time zone,
    updated_at timestamp without time zone,
    id integer NOT NULL,
    uuid character varying(36),
    name character varying(255),
    flavor_id character varying(255),
    keypair_id character varying(255),
    image_id character varying(255),
    external_network_id character varying(255),
    dns_nameserver character varying(255),
    apiserver_port integer,
    project_id character varying(255),
    user_id character varying(255),
    docker_volume_size integer,
    fixed_network character varying(255),
    master_flavor_id character varying(255),
    cluster_distro character varying(255),
    coe character varying(255),
    http_proxy character varying(255),
    https_proxy character varying(255),
    no_proxy character varying(255),
    registry_enabled boolean,
    network_driver character varying(255),
    labels text,
    tls_disabled boolean,
    public boolean,
    server_type character varying(255) DEFAULT 'vm'::character varying,
    volume_driver character varying(255),
    insecure_registry character varying(255),
    docker_storage_driver character varying(512),
    master_lb_enabled boolean,
    fixed_subnet character varying(255),
    floating_ip_enabled boolean,
    hidden boolean,
    tags character varying(255),
    driver character varying(255)
);

CREATE SEQUENCE baymodel_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE baymodel_id_seq OWNED BY cluster_template.id;

CREATE TABLE federation (
    created_at timestamp without time zone,
    updated_at timestamp without time zone,
    id integer NOT NULL,
    project_id character varying(255),
    uuid character varying(36),
    name character varying(255),
    hostcluster_id character varying(255),
    member_ids text,
    status character varying(20),
    status_reason text,
    properties text
);

CREATE SEQUENCE federation_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE federation_id_seq OWNED BY federation.id;

CREATE TABLE magnum_service (
    created_at timestamp without time zone,
    updated_at timestamp without time zone,
    id integer NOT NULL,
    report_count integer NOT NULL,
    host character varying(255),
    "binary" character varying(255),
    disabled boolean,
    disabled_reason character varying(255),
    last_seen_up timestamp without time zone,
    forced_down boolean
);

CREATE SEQUENCE magnum_service_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE magnum_service_id_seq OWNED BY magnum_service.id;

CREATE TABLE nodegroup (
    created_at timestamp without time zone,
    updated_at timestamp without time zone,
    id integer NOT NULL,
    uuid character varying(36) NOT NULL,
    name character varying(255) NOT NULL,
    cluster_id character varying(255) NOT NULL,
    project_id character varying(255) NOT NULL,
    docker_volume_size integer,
    labels text,
    flavor_id character varying(255),
    image_id character varying(255),
    node_addresses text,
    node_count integer,
    max_node_count integer,
    min_node_count integer,
    role character varying(255),
    is_default boolean,
    stack_id character varying(255),
    status character varying(20),
    status_reason text,
    version character varying(20),
    node_labels text,
    node_taints text
);

CREATE SEQUENCE nodegroup_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE nodegroup_id_seq OWNED BY nodegroup.id;

CREATE TABLE quotas (
    id integer NOT NULL,
    created_at timestamp without time zone,
    updated_at timestamp without time zone,
    project_id character varying(255),
    resource character varying(255),
    hard_limit integer NOT NULL
);

CREATE SEQUENCE quotas_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE quotas_id_seq OWNED BY quotas.id;

CREATE TABLE x509keypair (
    id integer NOT NULL,
    created_at timestamp without time zone,
    updated_at timestamp without time zone,
    uuid character varying(36),
    certificate text,
    private_key text,
    project_id character varying(255),
    user_id character varying(255),
    intermediates text,
    private_key_passphrase text
);

CREATE SEQUENCE x509keypair_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE x509keypair_id_seq OWNED BY x509keypair.id;

ALTER TABLE ONLY cluster ALTER COLUMN id SET DEFAULT nextval('bay_id_seq'::regclass);

ALTER TABLE ONLY cluster_template ALTER COLUMN id SET DEFAULT nextval('baymodel_id_seq'::regclass);

ALTER TABLE ONLY federation ALTER COLUMN id SET DEFAULT nextval('federation_id_seq'::regclass);

ALTER TABLE ONLY magnum_service ALTER COLUMN id SET DEFAULT nextval('magnum_service_id_seq'::regclass);

ALTER TABLE ONLY nodegroup ALTER COLUMN id SET DEFAULT nextval('nodegroup_id_seq'::regclass);

ALTER TABLE ONLY quotas ALTER COLUMN id SET DEFAULT nextval('quotas_id_seq'::regclass);

ALTER TABLE ONLY x509keypair ALTER COLUMN id SET DEFAULT nextval('x509keypair_id_seq'::regclass);

ALTER TABLE ONLY alembic_version
    ADD CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num);

ALTER TABLE ONLY cluster
    ADD CONSTRAINT bay_pkey PRIMARY KEY (id);

ALTER TABLE ONLY cluster_template
    ADD CONSTRAINT baymodel_pkey PRIMARY KEY (id);

ALTER TABLE ONLY federation
    ADD CONSTRAINT federation_pkey PRIMARY KEY (id);

ALTER TABLE ONLY magnum_service
    ADD CONSTRAINT magnum_service_pkey PRIMARY KEY (id);

ALTER TABLE ONLY nodegroup
    ADD CONSTRAINT nodegroup_pkey PRIMARY KEY (id);

ALTER TABLE ONLY quotas
    ADD CONSTRAINT quotas_pkey PRIMARY KEY (id);

ALTER TABLE ONLY cluster
    ADD CONSTRAINT uniq_bay0uuid UNIQUE (uuid);

ALTER TABLE ONLY cluster_template
    ADD CONSTRAINT uniq_baymodel0uuid UNIQUE (uuid);

ALTER TABLE ONLY federation
    ADD CONSTRAINT uniq_federation0uuid UNIQUE (uuid);

ALTER TABLE ONLY magnum_service
    ADD CONSTRAINT uniq_magnum_service0host0binary UNIQUE (host, "binary");

ALTER TABLE ONLY nodegroup
    ADD CONSTRAINT uniq_nodegroup0cluster_id0name UNIQUE (cluster_id, name);

ALTER TABLE ONLY nodegroup
    ADD CONSTRAINT uniq_nodegroup0uuid UNIQUE (uuid);

ALTER TABLE ONLY quotas
    ADD CONSTRAINT uniq_quotas0project_id0resource UNIQUE (project_id, resource);

ALTER TABLE ONLY x509keypair
    ADD CONSTRAINT uniq_x509keypair0uuid UNIQUE (uuid);

ALTER TABLE ONLY x509keypair
    ADD CONSTRAINT x509keypair_pkey PRIMARY KEY (id);

INSERT INTO alembic_version (version_num) VALUES ('b3e1cf4a2d5e');
