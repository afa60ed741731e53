import type { Sql } from '@gatehouse/db';
import { CLIENTS_READ_SECRETS, RESOURCES_READ_SECRETS, SYSTEM_RESOURCES } from './system.js';

/** Name of the seeded admin console client (apps/console) of the default instance. */
export const CONSOLE_CLIENT_NAME = 'Gatehouse console';
/** The `client_metadata` flag that marks the seeded console client (`"gatehouse_console": true`). */
export const CONSOLE_CLIENT_FLAG = 'gatehouse_console';
/**
 * The console client's id, fixed forever (the console's static server names it in its /config.json without a
 * database: apps/console/server/main.mjs holds the same value, a test keeps the two equal).
 */
export const CONSOLE_CLIENT_ID = 'a3f7c2d0-5e1b-5c8a-9d4f-0c6b1e2a7f93';
/** The console's path that receives the authorization response. */
export const CONSOLE_CALLBACK_PATH = '/callback';
/** Scopes the console client is not granted: a secret is shown once, in the create and rotate answers. */
const WITHHELD_SCOPES = [CLIENTS_READ_SECRETS, RESOURCES_READ_SECRETS];
const LOCK_KEY = 'gatehouse:console-client';

/**
 * The console client's `client_metadata` for the console at `consoleUrl`: authorization code (PKCE, as every code
 * request) and refresh tokens (rotated), its callback `<console>/callback`, back to `<console>/` after sign-out.
 */
export function consoleClientMetadata(consoleUrl: string): Record<string, unknown> {
  const base = consoleUrl.replace(/\/+$/, '');
  return {
    grant_types: ['authorization_code', 'refresh_token'],
    urls: { callbacks: [`${base}${CONSOLE_CALLBACK_PATH}`], logout_urls: [`${base}/`] },
    // a refresh token lives 8 hours idle at most: an unattended console signs its admin out
    refresh_token: { expiration_enabled: true, expiration_lifetime: 8 * 3600 },
    [CONSOLE_CLIENT_FLAG]: true,
  };
}

export interface EnsuredConsoleClient {
  /** The client was created by this call (first start, or deleted since). */
  created: boolean;
  /** Its callback and logout URLs were changed to the current console URL's. */
  updated: boolean;
  /** Not created: another client of the default instance already has its name. */
  nameTaken: boolean;
}

/**
 * Make sure the default instance has the seeded first-party console client (apps/console signs in through it):
 * public (no secret), PKCE, authorization_code and refresh_token, `is_first_party` (no consent page), global, its
 * id {@link CONSOLE_CLIENT_ID}. It is authorized on the two system resources and granted every scope of both but
 * the `*:read_secrets` ones; what a token of it carries is, of those, what its user holds in effect (RBAC of the
 * system resources), so the console shows each administrator only what their own roles allow. An existing one
 * whose URLs name another console (CONSOLE_URL changed) gets the current ones; nothing else of it changes (an
 * operator may have narrowed its scopes). A deleted one is created again at the next start.
 */
export async function ensureConsoleClient(db: Sql, consoleUrl: string): Promise<EnsuredConsoleClient> {
  const metadata = consoleClientMetadata(consoleUrl);
  const urls = metadata.urls as { callbacks: string[]; logout_urls: string[] };
  return db.transaction(async (m) => {
    await m.exec(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [LOCK_KEY]);
    const [instance] = await m.rows<{ id: string }>(`SELECT id FROM instances WHERE is_default`);
    if (!instance) return { created: false, updated: false, nameTaken: false };
    const inserted = await m.rows<{ id: string }>(
      `INSERT INTO clients (id, instance_id, client_name, client_type, client_description, client_metadata,
                            is_public, is_first_party, is_global, is_default)
       VALUES ($1, $2, $3, 'spa', $4, $5::jsonb, true, true, true, false)
       ON CONFLICT DO NOTHING RETURNING id`,
      [
        CONSOLE_CLIENT_ID,
        instance.id,
        CONSOLE_CLIENT_NAME,
        'Seeded by the token server for the admin console (apps/console). Deleting it is allowed: the next start ' +
          'of the token server creates it again.',
        JSON.stringify(metadata),
      ],
    );
    if (inserted.length) {
      const resources = await m.rows<{ id: string }>(
        `SELECT id FROM resources WHERE instance_id = $1 AND is_system AND identifier_url = ANY($2::text[])`,
        [instance.id, SYSTEM_RESOURCES.map((r) => r.identifierUrl)],
      );
      const ids = resources.map((r) => r.id);
      await m.exec(
        `INSERT INTO client_resources (instance_id, client_id, resource_id)
         SELECT $1, $2, unnest($3::uuid[]) ON CONFLICT DO NOTHING`,
        [instance.id, CONSOLE_CLIENT_ID, ids],
      );
      await m.exec(
        `INSERT INTO client_permissions (instance_id, client_id, resource_id, scope_id)
         SELECT $1, $2, s.resource_id, s.id FROM scopes s
          WHERE s.resource_id = ANY($3::uuid[]) AND NOT s.scope_name = ANY($4::text[])
         ON CONFLICT (client_id, scope_id) DO NOTHING`,
        [instance.id, CONSOLE_CLIENT_ID, ids, WITHHELD_SCOPES],
      );
      return { created: true, updated: false, nameTaken: false };
    }
    const updated = await m.rows<{ id: string }>(
      `UPDATE clients
          SET client_metadata = jsonb_set(client_metadata, '{urls}',
                                          coalesce(client_metadata->'urls', '{}'::jsonb) || $2::jsonb),
              updated_at = now()
        WHERE id = $1
          AND (client_metadata->'urls'->'callbacks' IS DISTINCT FROM $2::jsonb->'callbacks'
               OR client_metadata->'urls'->'logout_urls' IS DISTINCT FROM $2::jsonb->'logout_urls')
        RETURNING id`,
      [CONSOLE_CLIENT_ID, JSON.stringify(urls)],
    );
    if (updated.length) return { created: false, updated: true, nameTaken: false };
    const [exists] = await m.rows<{ id: string }>(`SELECT id FROM clients WHERE id = $1`, [
      CONSOLE_CLIENT_ID,
    ]);
    return { created: false, updated: false, nameTaken: !exists };
  });
}
