import type { MigrationInterface, QueryRunner } from 'typeorm';

const audit = `
  created_by uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_by uuid,
  updated_at timestamptz NOT NULL DEFAULT now()`;

/**
 * The identity data model: instances, tenants, clients, resources, scopes, client authorizations and
 * permissions, users, user identities, oidc-provider artifacts, signing keys, bootstrap markers.
 * Hand-written; the drift test checks that the entities describe exactly this schema.
 */
export class IdentitySchema1790000000000 implements MigrationInterface {
  name = 'IdentitySchema1790000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS pgcrypto`);

    await q.query(`
      CREATE TABLE instances (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        name text NOT NULL,
        description text,
        is_default boolean NOT NULL DEFAULT false,
        multi_tenant boolean NOT NULL DEFAULT false,
        settings jsonb NOT NULL DEFAULT '{}',
        app_metadata jsonb NOT NULL DEFAULT '[]',${audit},
        CONSTRAINT pk_instances PRIMARY KEY (id)
      )`);
    await q.query(`CREATE UNIQUE INDEX ux_instances_default ON instances (is_default) WHERE is_default`);
    await q.query(`CREATE UNIQUE INDEX ux_instances_name ON instances (lower(name))`);

    await q.query(`
      CREATE TABLE tenants (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL,
        name text NOT NULL,
        description text,
        app_metadata jsonb NOT NULL DEFAULT '[]',${audit},
        CONSTRAINT pk_tenants PRIMARY KEY (id),
        CONSTRAINT fk_tenants_instance FOREIGN KEY (instance_id) REFERENCES instances (id)
      )`);
    await q.query(`CREATE UNIQUE INDEX ux_tenants_name ON tenants (instance_id, lower(name))`);

    await q.query(`
      CREATE TABLE clients (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL,
        tenant_id uuid,
        client_name text NOT NULL,
        client_type text,
        client_description text,
        client_secret_enc text,
        client_secret_expires_at timestamptz,
        client_metadata jsonb NOT NULL DEFAULT '{}',
        app_metadata jsonb NOT NULL DEFAULT '[]',
        is_public boolean NOT NULL DEFAULT false,
        is_first_party boolean NOT NULL DEFAULT false,
        is_global boolean NOT NULL DEFAULT true,
        is_default boolean NOT NULL DEFAULT false,${audit},
        CONSTRAINT pk_clients PRIMARY KEY (id),
        CONSTRAINT fk_clients_instance FOREIGN KEY (instance_id) REFERENCES instances (id),
        CONSTRAINT fk_clients_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )`);
    // One name per (instance, tenant); global clients (no tenant) form one group of their own.
    await q.query(
      `CREATE UNIQUE INDEX ux_clients_name ON clients (instance_id, tenant_id, lower(client_name)) NULLS NOT DISTINCT`,
    );
    await q.query(`CREATE UNIQUE INDEX ux_clients_default ON clients (instance_id) WHERE is_default`);
    await q.query(`CREATE INDEX ix_clients_tenant ON clients (tenant_id)`);

    await q.query(`
      CREATE TABLE resources (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL,
        tenant_id uuid,
        resource_type text NOT NULL,
        resource_name text NOT NULL,
        resource_description text,
        identifier_url text,
        is_system boolean NOT NULL DEFAULT false,
        signing_algorithm text NOT NULL DEFAULT 'RS256',
        signing_secret_enc text,
        token_lifetime integer NOT NULL DEFAULT 86400,
        rbac_enabled boolean NOT NULL DEFAULT false,
        scopes_added boolean NOT NULL DEFAULT false,
        skip_consent_for_first_party boolean NOT NULL DEFAULT true,
        app_metadata jsonb NOT NULL DEFAULT '[]',
        created_by uuid,
        created_date timestamptz NOT NULL DEFAULT now(),
        updated_by uuid,
        updated_date timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_resources PRIMARY KEY (id),
        CONSTRAINT uq_resources_identifier_url UNIQUE (instance_id, identifier_url),
        CONSTRAINT fk_resources_instance FOREIGN KEY (instance_id) REFERENCES instances (id),
        CONSTRAINT fk_resources_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )`);
    await q.query(`CREATE INDEX ix_resources_tenant ON resources (tenant_id)`);

    await q.query(`
      CREATE TABLE scopes (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL,
        resource_id uuid NOT NULL,
        scope_name text NOT NULL,
        scope_description text,${audit},
        CONSTRAINT pk_scopes PRIMARY KEY (id),
        CONSTRAINT uq_scopes_name UNIQUE (resource_id, scope_name),
        CONSTRAINT uq_scopes_resource_id UNIQUE (resource_id, id),
        CONSTRAINT fk_scopes_instance FOREIGN KEY (instance_id) REFERENCES instances (id),
        CONSTRAINT fk_scopes_resource FOREIGN KEY (resource_id) REFERENCES resources (id) ON DELETE CASCADE
      )`);

    await q.query(`
      CREATE TABLE client_resources (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL,
        client_id uuid NOT NULL,
        resource_id uuid NOT NULL,${audit},
        CONSTRAINT pk_client_resources PRIMARY KEY (id),
        CONSTRAINT uq_client_resources UNIQUE (client_id, resource_id),
        CONSTRAINT fk_client_resources_instance FOREIGN KEY (instance_id) REFERENCES instances (id),
        CONSTRAINT fk_client_resources_client FOREIGN KEY (client_id) REFERENCES clients (id) ON DELETE CASCADE,
        CONSTRAINT fk_client_resources_resource FOREIGN KEY (resource_id) REFERENCES resources (id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX ix_client_resources_resource ON client_resources (resource_id)`);

    await q.query(`
      CREATE TABLE client_permissions (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL,
        client_id uuid NOT NULL,
        resource_id uuid NOT NULL,
        scope_id uuid NOT NULL,${audit},
        CONSTRAINT pk_client_permissions PRIMARY KEY (id),
        CONSTRAINT uq_client_permissions UNIQUE (client_id, scope_id),
        CONSTRAINT fk_client_permissions_instance FOREIGN KEY (instance_id) REFERENCES instances (id),
        CONSTRAINT fk_client_permissions_client_resource FOREIGN KEY (client_id, resource_id)
          REFERENCES client_resources (client_id, resource_id) ON DELETE CASCADE,
        CONSTRAINT fk_client_permissions_scope FOREIGN KEY (resource_id, scope_id)
          REFERENCES scopes (resource_id, id) ON DELETE CASCADE
      )`);
    await q.query(
      `CREATE INDEX ix_client_permissions_client_resource ON client_permissions (client_id, resource_id)`,
    );
    await q.query(
      `CREATE INDEX ix_client_permissions_resource_scope ON client_permissions (resource_id, scope_id)`,
    );

    await q.query(`
      CREATE TABLE users (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL,
        tenant_id uuid,
        user_email text,
        user_name text,
        phone_number text,
        password_hash text,
        name text,
        given_name text,
        family_name text,
        middle_name text,
        nickname text,
        picture text,
        gender text,
        birthdate date,
        locale text,
        zoneinfo text,
        address jsonb,
        email_verified boolean NOT NULL DEFAULT false,
        phone_verified boolean NOT NULL DEFAULT false,
        is_blocked boolean NOT NULL DEFAULT false,
        is_invited boolean NOT NULL DEFAULT false,
        invited_at timestamptz,
        failed_login_count integer NOT NULL DEFAULT 0,
        locked_until timestamptz,
        last_login_at timestamptz,
        login_count integer NOT NULL DEFAULT 0,
        app_metadata jsonb NOT NULL DEFAULT '[]',
        user_metadata jsonb NOT NULL DEFAULT '{}',${audit},
        CONSTRAINT pk_users PRIMARY KEY (id),
        CONSTRAINT fk_users_instance FOREIGN KEY (instance_id) REFERENCES instances (id),
        CONSTRAINT fk_users_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )`);
    await q.query(`CREATE UNIQUE INDEX ux_users_email ON users (instance_id, lower(user_email))`);
    await q.query(`CREATE UNIQUE INDEX ux_users_name ON users (instance_id, lower(user_name))`);
    await q.query(`CREATE UNIQUE INDEX ux_users_phone ON users (instance_id, phone_number)`);
    await q.query(`CREATE INDEX ix_users_tenant ON users (tenant_id)`);

    await q.query(`
      CREATE TABLE user_identities (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL,
        user_id uuid NOT NULL,
        provider text NOT NULL,
        provider_user_id text NOT NULL,
        profile jsonb NOT NULL DEFAULT '{}',
        last_sign_in_at timestamptz,${audit},
        CONSTRAINT pk_user_identities PRIMARY KEY (id),
        CONSTRAINT uq_user_identities_provider UNIQUE (instance_id, provider, provider_user_id),
        CONSTRAINT fk_user_identities_instance FOREIGN KEY (instance_id) REFERENCES instances (id),
        CONSTRAINT fk_user_identities_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX ix_user_identities_user ON user_identities (user_id)`);

    await q.query(`
      CREATE TABLE oidc_payloads (
        model text NOT NULL,
        id text NOT NULL,
        payload jsonb NOT NULL,
        grant_id text,
        user_code text,
        uid text,
        expires_at timestamptz,
        consumed_at timestamptz,
        CONSTRAINT pk_oidc_payloads PRIMARY KEY (model, id)
      )`);
    await q.query(`CREATE INDEX ix_oidc_payloads_uid ON oidc_payloads (model, uid)`);
    await q.query(`CREATE INDEX ix_oidc_payloads_user_code ON oidc_payloads (model, user_code)`);
    await q.query(`CREATE INDEX ix_oidc_payloads_grant_id ON oidc_payloads (grant_id)`);
    await q.query(`CREATE INDEX ix_oidc_payloads_expires_at ON oidc_payloads (expires_at)`);

    await q.query(`
      CREATE TABLE signing_keys (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        kid text NOT NULL,
        alg text NOT NULL,
        use text NOT NULL DEFAULT 'sig',
        private_jwk_enc text NOT NULL,
        public_jwk jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        rotated_at timestamptz,
        expires_at timestamptz,
        CONSTRAINT pk_signing_keys PRIMARY KEY (id),
        CONSTRAINT uq_signing_keys_kid UNIQUE (kid)
      )`);

    await q.query(`
      CREATE TABLE bootstrap_markers (
        name text NOT NULL,
        instance_id uuid NOT NULL,
        details jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_bootstrap_markers PRIMARY KEY (name),
        CONSTRAINT fk_bootstrap_markers_instance FOREIGN KEY (instance_id) REFERENCES instances (id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'bootstrap_markers',
      'signing_keys',
      'oidc_payloads',
      'user_identities',
      'users',
      'client_permissions',
      'client_resources',
      'scopes',
      'resources',
      'clients',
      'tenants',
      'instances',
    ]) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
