/** The oidc_payloads table exactly as libs/identity/data's spec has it, for adapter tests on an empty database. */
export const OIDC_PAYLOADS_DDL = `
CREATE TABLE oidc_payloads (
  model text NOT NULL, id text NOT NULL, payload jsonb NOT NULL, grant_id text, user_code text, uid text,
  expires_at timestamptz, consumed_at timestamptz, CONSTRAINT pk_oidc_payloads PRIMARY KEY (model, id));
CREATE INDEX ix_oidc_payloads_uid ON oidc_payloads (model, uid);
CREATE INDEX ix_oidc_payloads_user_code ON oidc_payloads (model, user_code);
CREATE INDEX ix_oidc_payloads_grant_id ON oidc_payloads (grant_id);
CREATE INDEX ix_oidc_payloads_expires_at ON oidc_payloads (expires_at);
`;
