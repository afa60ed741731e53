import type { IncomingMessage } from 'node:http';
import { CLAIMS } from './provider.js';

/**
 * Attributes `fields` may name, per endpoint (document 1: token, userinfo; the device authorization answer as
 * /token's, RFC 8628 section 3.2; tokeninfo has its own list).
 */
export const FIELD_NAMES: Readonly<Record<string, ReadonlySet<string>>> = {
  '/token': new Set(['access_token', 'token_type', 'expires_in', 'scope', 'refresh_token', 'id_token']),
  '/device/code': new Set([
    'device_code',
    'user_code',
    'verification_uri',
    'verification_uri_complete',
    'expires_in',
    'interval',
  ]),
  '/userinfo': new Set(['sub', ...Object.values(CLAIMS).flat()]),
};

/** The requested `fields` of a request, remembered between our body handling and the provider's answer. */
const requested = new WeakMap<IncomingMessage, string[]>();

/** Parse `fields` (comma-separated); an unknown name is an error message, else the list is remembered. */
export function rememberFields(
  req: IncomingMessage,
  path: string,
  raw: string | undefined,
): string | undefined {
  const allowed = FIELD_NAMES[path];
  if (!raw || !allowed) return undefined;
  const fields = raw
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean);
  const unknown = fields.filter((f) => !allowed.has(f));
  if (unknown.length) return `unknown field(s) in fields: ${unknown.join(', ')}`;
  if (fields.length) requested.set(req, fields);
  return undefined;
}

/** Keep only the requested attributes of a successful JSON answer. */
export function applyFields(req: IncomingMessage, body: unknown): unknown {
  const fields = requested.get(req);
  if (!fields || !body || typeof body !== 'object' || Array.isArray(body)) return body;
  const b = body as Record<string, unknown>;
  return Object.fromEntries(fields.filter((f) => f in b).map((f) => [f, b[f]]));
}
