/** SQL fragments of clients (alias `c`); a leaf module, so other modules may build on them when they load. */
import { iso } from '../common/sql-time.js';

/** Columns of a clients row (alias `c`); the secret's ciphertext is read only where a secret is answered. */
export const CLIENT_COLUMNS = `c.id, c.instance_id, c.tenant_id, c.client_type, c.client_name,
  ${iso('c.client_secret_expires_at')} AS client_secret_expires_at, c.client_description, c.client_metadata,
  c.app_metadata, c.is_public, c.is_first_party, c.is_global, c.is_default, c.created_by,
  ${iso('c.created_at')} AS created_at, c.updated_by, ${iso('c.updated_at')} AS updated_at`;
