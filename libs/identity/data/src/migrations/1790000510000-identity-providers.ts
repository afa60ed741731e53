import type { MigrationInterface, QueryRunner } from 'typeorm';

const audit = `
  created_by uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_by uuid,
  updated_at timestamptz NOT NULL DEFAULT now()`;

/**
 * Tenant identity providers: the OpenID Connect providers a tenant trusts for token exchange (RFC 8693),
 * each by its issuer (one per tenant), the client id our tenant has there (the `aud` its ID tokens carry), the client
 * secret sealed with the SecretBox, and its JWKS URI (else found through its discovery document).
 *
 * User identities now name the provider that created them (`identity_provider_id`, kept when the provider goes:
 * SET NULL) and its `issuer`: an account at a provider is its issuer and `sub`, so the unique key of an identity is
 * (instance, issuer, provider_user_id) instead of (instance, provider kind, provider_user_id). `issuer` is null
 * only for identities written otherwise than by token exchange (none are, today).
 */
export class IdentityProviders1790000510000 implements MigrationInterface {
  name = 'IdentityProviders1790000510000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE tenant_identity_providers (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL,
        tenant_id uuid NOT NULL,
        identity_provider text NOT NULL,
        name text NOT NULL,
        issuer text NOT NULL,
        client_id text NOT NULL,
        client_secret_enc text,
        jwks_uri text,
        enabled boolean NOT NULL DEFAULT true,${audit},
        CONSTRAINT pk_tenant_identity_providers PRIMARY KEY (id),
        CONSTRAINT uq_tenant_identity_providers_issuer UNIQUE (tenant_id, issuer),
        CONSTRAINT fk_tenant_identity_providers_instance FOREIGN KEY (instance_id) REFERENCES instances (id),
        CONSTRAINT fk_tenant_identity_providers_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
          ON DELETE CASCADE
      )`);
    await q.query(
      `CREATE INDEX ix_tenant_identity_providers_issuer ON tenant_identity_providers (instance_id, issuer)`,
    );

    await q.query(`ALTER TABLE user_identities ADD COLUMN identity_provider_id uuid, ADD COLUMN issuer text`);
    await q.query(`ALTER TABLE user_identities DROP CONSTRAINT uq_user_identities_provider`);
    await q.query(
      `ALTER TABLE user_identities ADD CONSTRAINT uq_user_identities_issuer UNIQUE (instance_id, issuer, provider_user_id)`,
    );
    await q.query(
      `ALTER TABLE user_identities ADD CONSTRAINT fk_user_identities_identity_provider
         FOREIGN KEY (identity_provider_id) REFERENCES tenant_identity_providers (id) ON DELETE SET NULL`,
    );
    await q.query(
      `CREATE INDEX ix_user_identities_identity_provider ON user_identities (identity_provider_id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX ix_user_identities_identity_provider`);
    await q.query(`ALTER TABLE user_identities DROP CONSTRAINT fk_user_identities_identity_provider`);
    await q.query(`ALTER TABLE user_identities DROP CONSTRAINT uq_user_identities_issuer`);
    await q.query(
      `ALTER TABLE user_identities ADD CONSTRAINT uq_user_identities_provider UNIQUE (instance_id, provider, provider_user_id)`,
    );
    await q.query(`ALTER TABLE user_identities DROP COLUMN issuer, DROP COLUMN identity_provider_id`);
    await q.query(`DROP TABLE tenant_identity_providers`);
  }
}
