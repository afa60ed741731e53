import { ApiProperty } from '@nestjs/swagger';
import type { Timestamp } from '@gatehouse/db';
import { defineVersionedRecord } from '../common/records.js';

/** What a grant gives on one resource (API): its identifier and the scopes granted there. */
export interface GrantResource {
  identifier_url: string;
  scopes: string[];
}

/**
 * A user grant: the consent (and login) a user gave a client, as oidc-provider keeps it (`oidc_payloads`, model
 * `Grant`). Refresh tokens, codes and stored access tokens hang off it by `grant_id`.
 */
export interface UserGrantRecord {
  id: string;
  user_id: string;
  client_id: string;
  client_name: string | null;
  /** OpenID scopes granted (openid, profile, email, offline_access, ...). */
  scopes: string[];
  resources: GrantResource[];
  /** Live (unused, unexpired) refresh tokens of the grant. */
  refresh_tokens: number;
  has_refresh_token: boolean;
  created_at: Timestamp | null;
  expires_at: Timestamp | null;
}

export interface UserGrantRow {
  id: string;
  user_id: string;
  client_id: string;
  client_name: string | null;
  openid_scope: string | null;
  resources: Record<string, string> | null;
  refresh_tokens: number;
  created_at: Timestamp | null;
  expires_at: Timestamp | null;
}

const words = (s: string | null | undefined) => (s ?? '').split(' ').filter(Boolean);

export function userGrantRecord(r: UserGrantRow): UserGrantRecord {
  return {
    id: r.id,
    user_id: r.user_id,
    client_id: r.client_id,
    client_name: r.client_name,
    scopes: words(r.openid_scope),
    resources: Object.entries(r.resources ?? {}).map(([identifier_url, scope]) => ({
      identifier_url,
      scopes: words(scope),
    })),
    refresh_tokens: r.refresh_tokens,
    has_refresh_token: r.refresh_tokens > 0,
    created_at: r.created_at,
    expires_at: r.expires_at,
  };
}

/** Same shape in both presentations (document 2 names no grant fields). */
export const userGrantSpecs = defineVersionedRecord({
  name: 'user_grant',
  attributes: [
    { name: 'id', column: 'ug.id', type: 'string' },
    { name: 'user_id', column: 'ug.user_id', type: 'string' },
    { name: 'client_id', column: 'ug.client_id', type: 'string' },
    { name: 'client_name', column: 'ug.client_name', type: 'string' },
    { name: 'scopes', column: 'ug.openid_scope', type: 'string' },
    { name: 'resources', column: 'ug.resources', type: 'json' },
    { name: 'refresh_tokens', column: 'ug.refresh_tokens', type: 'integer' },
    { name: 'has_refresh_token', column: '(ug.refresh_tokens > 0)', type: 'boolean' },
    { name: 'created_at', column: 'ug.created_at', type: 'datetime' },
    { name: 'expires_at', column: 'ug.expires_at', type: 'datetime' },
  ],
  children: { v1: [], v2: [] },
});

export const shapeUserGrant = () => (rec: UserGrantRecord) => ({ ...rec }) as Record<string, unknown>;

class GrantResourceDoc {
  @ApiProperty({ example: 'https://api.example.com' }) identifier_url: string;
  @ApiProperty({ type: [String], example: ['orders:read'] }) scopes: string[];
}

export class UserGrantDoc {
  @ApiProperty({ description: "The grant's id (oidc-provider's; not a UUID)" }) id: string;
  @ApiProperty({ format: 'uuid' }) user_id: string;
  @ApiProperty({ format: 'uuid' }) client_id: string;
  @ApiProperty({ type: String, nullable: true }) client_name: string | null;
  @ApiProperty({
    type: [String],
    example: ['openid', 'profile', 'offline_access'],
    description: 'OpenID scopes',
  })
  scopes: string[];
  @ApiProperty({ type: [GrantResourceDoc], description: 'Scopes granted per API (resource)' })
  resources: GrantResourceDoc[];
  @ApiProperty({ description: 'Live refresh tokens of the grant' }) refresh_tokens: number;
  @ApiProperty() has_refresh_token: boolean;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) created_at: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) expires_at: string | null;
}
