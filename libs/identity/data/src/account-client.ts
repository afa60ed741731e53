import { createHash } from 'node:crypto';
import type { Sql } from '@gatehouse/db';

/** The account pages' path on the token server (`<issuer>/account`). */
export const ACCOUNT_PAGES_PATH = '/account';
/** Name of the seeded account client of every instance. */
export const ACCOUNT_CLIENT_NAME = 'Gatehouse account';
/**
 * The `client_metadata` flag that marks the seeded account client (`"gatehouse_account": true`); its id is also
 * fixed: {@link accountClientId} of its instance.
 */
export const ACCOUNT_CLIENT_FLAG = 'gatehouse_account';
/** UUIDv5 namespace of the seeded account clients' ids (fixed forever: ids must not change between releases). */
const ACCOUNT_CLIENT_NAMESPACE = '6f0b7c1e-8a4d-5e2f-9b3a-1c7d2e4f6a80';
const LOCK_KEY = 'gatehouse:account-clients';

/** RFC 9562 UUIDv5 (SHA-1) of `name` in `namespace`. */
function uuidV5(namespace: string, name: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  const h = createHash('sha1').update(ns).update(name, 'utf8').digest().subarray(0, 16);
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** The id of an instance's seeded account client: the same on every replica and every start. */
export const accountClientId = (instanceId: string): string =>
  uuidV5(ACCOUNT_CLIENT_NAMESPACE, instanceId.toLowerCase());

/** The seeded client's `client_metadata` for the issuer: authorization_code only, the account page its one callback. */
export function accountClientMetadata(issuer: string): Record<string, unknown> {
  return {
    grant_types: ['authorization_code'],
    urls: { callbacks: [`${issuer.replace(/\/+$/, '')}${ACCOUNT_PAGES_PATH}`] },
    [ACCOUNT_CLIENT_FLAG]: true,
  };
}

export interface EnsuredAccountClients {
  /** Ids of the clients this call created (none existed: a new instance, or one deleted since). */
  created: string[];
  /** Ids of the clients whose callback this call changed to the current issuer's. */
  updated: string[];
  /** Instances whose client could not be created: another client of theirs already has its name. */
  nameTaken: string[];
}

/**
 * Make sure every instance (or only `instanceIds`) has its seeded first-party account client (the token server's
 * account pages sign in through it): public (`is_public`, no secret: token_endpoint_auth_method `none`), PKCE,
 * authorization_code only, `is_first_party`, its one callback `<issuer>/account`, flagged `gatehouse_account`, with
 * no API resource and no scope (it can get an ID token, never a management or tree API token). Its id is
 * {@link accountClientId} of the instance, so replicas starting at once insert the same row: `ON CONFLICT DO
 * NOTHING`, under a transaction-scoped advisory lock. An existing one whose callback names another issuer (ISSUER
 * changed) gets the current one; nothing else of it changes. A deleted one is created again.
 */
export async function ensureAccountClients(
  db: Sql,
  issuer: string,
  instanceIds?: string[],
): Promise<EnsuredAccountClients> {
  const metadata = accountClientMetadata(issuer);
  const callbacks = (metadata.urls as { callbacks: string[] }).callbacks;
  return db.transaction(async (m) => {
    await m.exec(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [LOCK_KEY]);
    const instances = await m.rows<{ id: string }>(
      `SELECT id FROM instances WHERE $1::uuid[] IS NULL OR id = ANY($1::uuid[]) ORDER BY created_at, id`,
      [instanceIds ?? null],
    );
    const out: EnsuredAccountClients = { created: [], updated: [], nameTaken: [] };
    for (const { id: instanceId } of instances) {
      const clientId = accountClientId(instanceId);
      const inserted = await m.rows<{ id: string }>(
        `INSERT INTO clients (id, instance_id, client_name, client_type, client_description, client_metadata,
                              is_public, is_first_party, is_global, is_default)
         VALUES ($1, $2, $3, 'spa', $4, $5::jsonb, true, true, true, false)
         ON CONFLICT DO NOTHING RETURNING id`,
        [
          clientId,
          instanceId,
          ACCOUNT_CLIENT_NAME,
          'Seeded by the token server for its account pages (/account). Deleting it is allowed: the next start of ' +
            'the token server creates it again.',
          JSON.stringify(metadata),
        ],
      );
      if (inserted.length) {
        out.created.push(clientId);
        continue;
      }
      const updated = await m.rows<{ id: string }>(
        `UPDATE clients
            SET client_metadata = jsonb_set(client_metadata, '{urls}',
                                            coalesce(client_metadata->'urls', '{}'::jsonb) || jsonb_build_object('callbacks', $2::jsonb)),
                updated_at = now()
          WHERE id = $1 AND client_metadata->'urls'->'callbacks' IS DISTINCT FROM $2::jsonb
          RETURNING id`,
        [clientId, JSON.stringify(callbacks)],
      );
      if (updated.length) out.updated.push(clientId);
      else {
        const [exists] = await m.rows<{ id: string }>(`SELECT id FROM clients WHERE id = $1`, [clientId]);
        if (!exists) out.nameTaken.push(instanceId);
      }
    }
    return out;
  });
}
