import type { SecretBox } from '@gatehouse/identity-data';
import type { Sql } from '@gatehouse/db';
import { SigningKeys } from './signing-keys.js';

export interface RotationSettings {
  AUTH_ACCESS_TOKEN_TTL_SEC: number;
  AUTH_ID_TOKEN_TTL_SEC: number;
  AUTH_KEY_REFRESH_SEC: number;
}

/** Margin for clock skew and slow requests, on top of the longest token lifetime. */
export const ROTATION_MARGIN_SEC = 300;

/**
 * How long a rotated key must stay published: the longest lifetime of a token it may have signed (the largest
 * resource token_lifetime, client ID token lifetime, or server default), plus the time other token-server processes
 * may still sign with it before they notice the rotation (AUTH_KEY_REFRESH_SEC), plus a margin.
 */
export async function rotationGraceSeconds(sql: Sql, s: RotationSettings): Promise<number> {
  const [row] = await sql.rows<{ resources: number | null; id_tokens: number | null }>(
    `SELECT (SELECT max(token_lifetime) FROM resources) AS resources,
            (SELECT max((client_metadata #>> '{id_token,expiration_lifetime}')::int) FROM clients
              WHERE jsonb_typeof(client_metadata #> '{id_token,expiration_lifetime}') = 'number') AS id_tokens`,
  );
  const longest = Math.max(
    Number(row?.resources ?? 0),
    Number(row?.id_tokens ?? 0),
    s.AUTH_ACCESS_TOKEN_TTL_SEC,
    s.AUTH_ID_TOKEN_TTL_SEC,
  );
  return longest + s.AUTH_KEY_REFRESH_SEC + ROTATION_MARGIN_SEC;
}

/** Add new active signing keys; the previous ones keep being published for the grace period, then go. */
export async function rotateSigningKeys(
  sql: Sql,
  box: SecretBox,
  s: RotationSettings,
  graceSeconds?: number,
) {
  const grace = graceSeconds ?? (await rotationGraceSeconds(sql, s));
  const result = await new SigningKeys(sql, box).rotate(grace);
  return { ...result, graceSeconds: grace };
}
