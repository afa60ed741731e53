import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Sql } from '@gatehouse/db';
import type { AppMetadataEntry } from './entities/audit.js';
import type { InstanceSettings } from './entities/instance.entity.js';
import { DEFAULT_PASSWORD_VALIDATORS, hashPassword } from './passwords.js';
import { loadSecretBox, sealedIn, type SecretBox, type SecretBoxEnv } from './secret-box.js';
import { SYSTEM_RESOURCES } from './system.js';
import {
  addScopesToInstanceAdminRole,
  addScopesToTenantAdminRoles,
  ensureAdminRole,
  ensureInstanceAdminRoles,
  giveAdminRole,
} from './admin-roles.js';

export interface BootstrapEnv extends SecretBoxEnv {
  /** Level of the default logger (when no logger is passed). */
  LOG_LEVEL?: string;
  BOOTSTRAP_CLIENT_ID?: string;
  BOOTSTRAP_CLIENT_SECRET?: string;
  BOOTSTRAP_ADMIN_EMAIL?: string;
  BOOTSTRAP_ADMIN_PASSWORD?: string;
  /** Write generated credentials to this file (relative: in DATA_DIR, mode 0600) and print only its path. */
  BOOTSTRAP_SECRETS_FILE?: string;
}

/** The part of a logger bootstrap uses (a pino logger fits). Secrets are never passed to it. */
export interface BootstrapLogger {
  info(msg: string): void;
  warn(msg: string): void;
}

export interface BootstrapOptions {
  /** Where generated credentials are printed, once (default: process.stdout). */
  print?: (text: string) => void;
  /** Use this box instead of loading one from the environment. */
  box?: SecretBox;
}

export interface BootstrapResult {
  instanceId: string;
  clientId: string;
  adminUserId: string;
  /** True when this call seeded the database; false when it had been seeded before. */
  seeded: boolean;
  /** Which values this call generated (and printed), e.g. ['BOOTSTRAP_CLIENT_SECRET']. Empty when not seeded. */
  generated: string[];
}

export const DEFAULT_ADMIN_EMAIL = 'admin@gatehouse.local';
const MARKER = 'default-instance';
const LOCK_KEY = 'gatehouse:identity-bootstrap';

const LEVELS: Record<string, number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: 99,
};

/** Default logger: JSON lines on stdout, honouring LOG_LEVEL when the env carries it. */
function jsonLogger(level: string | undefined): BootstrapLogger {
  const min = LEVELS[level ?? 'info'] ?? 30;
  const line = (lvl: number, msg: string) => {
    if (lvl >= min) process.stdout.write(`${JSON.stringify({ level: lvl, msg })}\n`);
  };
  return { info: (msg) => line(30, msg), warn: (msg) => line(40, msg) };
}

const randomSecret = () => randomBytes(32).toString('base64url');

/**
 * Seed a new database once (docs/contract.md start-up contract): the default instance with its system resources
 * `urn:gatehouse:management` and `urn:gatehouse:tree` and their scopes and its default client (allowed
 * `client_credentials`, authorized on both resources and granted every scope of both), all by seedInstance, and an
 * admin user (the instance's first admin).
 * Ids and secrets come from BOOTSTRAP_* when set, else are generated and printed once.
 *
 * Safe to run from several processes at once and on every start: one transaction holds a PostgreSQL advisory lock,
 * and the `default-instance` marker row makes every later call a no-op that changes nothing. Later calls only add
 * system scopes introduced by a newer release (granting those new ones to the default client).
 */
export async function bootstrapIdentity(
  db: Sql,
  env: BootstrapEnv,
  log: BootstrapLogger = jsonLogger(env.LOG_LEVEL),
  opts: BootstrapOptions = {},
): Promise<BootstrapResult> {
  let box = opts.box;
  if (!box) {
    const loaded = loadSecretBox(env);
    box = loaded.box;
    if (loaded.source === 'generated') {
      log.warn(
        `generated the secret encryption key ${loaded.keyFile} (mode 0600); back it up, and set SECRET_ENCRYPTION_KEY in production`,
      );
    }
  }
  const sealer = box;

  const result = await db.transaction(async (m) => {
    await m.exec(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [LOCK_KEY]);
    const [marker] = await m.rows<{
      instance_id: string;
      details: { client_id?: string; admin_user_id?: string };
    }>(`SELECT instance_id, details FROM bootstrap_markers WHERE name = $1`, [MARKER]);
    if (marker) return existing(m, marker.instance_id, marker.details, env, log);
    return seed(m, env, sealer);
  });

  if (result.seeded) {
    log.info(`bootstrap: seeded default instance ${result.instanceId}, default client ${result.clientId}`);
    if (result.printable.length) {
      const print = opts.print ?? ((t) => process.stdout.write(t));
      if (env.BOOTSTRAP_SECRETS_FILE) {
        const file = writeSecretsFile(
          path.resolve(env.DATA_DIR, env.BOOTSTRAP_SECRETS_FILE),
          frame(result.printable),
        );
        print(fileNotice(file));
      } else {
        print(frame(result.printable));
      }
    }
  }
  const { printable: _printable, ...out } = result;
  return out;
}

type Internal = BootstrapResult & { printable: [string, string][] };

async function existing(
  m: Sql,
  instanceId: string,
  details: { client_id?: string; admin_user_id?: string },
  env: BootstrapEnv,
  log: BootstrapLogger,
): Promise<Internal> {
  const clientId = details.client_id ?? '';
  const adminUserId = details.admin_user_id ?? '';
  if (env.BOOTSTRAP_CLIENT_ID && env.BOOTSTRAP_CLIENT_ID.toLowerCase() !== clientId) {
    log.warn(
      `BOOTSTRAP_CLIENT_ID differs from the default client created at first start (${clientId}); BOOTSTRAP_* only apply to an empty database and were ignored`,
    );
  }
  // Every instance gets the system scopes a newer release added, granted to its default client and admin roles.
  // A default client may be gone only through direct SQL; then new scopes are added but granted to nobody.
  const instances = await m.rows<{ id: string; client_id: string | null }>(
    `SELECT i.id, (SELECT c.id FROM clients c WHERE c.instance_id = i.id AND c.is_default LIMIT 1) AS client_id
       FROM instances i ORDER BY i.created_at, i.id`,
  );
  for (const i of instances) await ensureSystemScopes(m, i.id, i.client_id ?? undefined);
  // A database from before admin roles: each instance gets its admin role, given to its admins of today.
  await ensureInstanceAdminRoles(m);
  return {
    instanceId,
    clientId,
    adminUserId,
    seeded: false,
    generated: [],
    printable: [],
  };
}

/** Insert system scopes missing from the system resources (a newer release added them); grant only those new ones. */
async function ensureSystemScopes(m: Sql, instanceId: string, defaultClientId?: string): Promise<void> {
  for (const spec of SYSTEM_RESOURCES) {
    const added = await m.rows<{ id: string; resource_id: string }>(
      `INSERT INTO scopes (instance_id, resource_id, scope_name, scope_description)
       SELECT r.instance_id, r.id, s.name, s.description
         FROM resources r, jsonb_to_recordset($3::jsonb) AS s(name text, description text)
        WHERE r.instance_id = $1 AND r.identifier_url = $2 AND r.is_system
       ON CONFLICT (resource_id, scope_name) DO NOTHING
       RETURNING id, resource_id`,
      [instanceId, spec.identifierUrl, JSON.stringify(spec.scopes)],
    );
    await addScopesToInstanceAdminRole(
      m,
      instanceId,
      added.map((a) => a.id),
    );
    await addScopesToTenantAdminRoles(
      m,
      instanceId,
      added.map((a) => a.id),
    );
    if (!added.length || !defaultClientId) continue;
    await m.exec(
      `INSERT INTO client_permissions (instance_id, client_id, resource_id, scope_id)
       SELECT $1, $2, a.resource_id, a.id
         FROM unnest($3::uuid[], $4::uuid[]) AS a(id, resource_id)
         JOIN client_resources cr ON cr.client_id = $2 AND cr.resource_id = a.resource_id
       ON CONFLICT (client_id, scope_id) DO NOTHING`,
      [instanceId, defaultClientId, added.map((a) => a.id), added.map((a) => a.resource_id)],
    );
  }
}

/** What a new instance starts with (seedInstance). */
export interface NewInstance {
  name: string;
  description?: string | null;
  /** `instances.settings` (document 2's instance_metadata); default: DEFAULT_INSTANCE_SETTINGS. */
  settings?: InstanceSettings;
  appMetadata?: AppMetadataEntry[];
  /** Multi-tenant mode of the instance (the `tenant_id` header of Get resources is honoured). */
  multiTenant?: boolean;
  /** The first instance of a database (only bootstrap seeds it). */
  isDefault?: boolean;
  /** Id of the default client (default: generated). */
  clientId?: string;
  /** Secret of the default client (default: generated). */
  clientSecret?: string;
  /** `created_by` / `updated_by` of what is written. */
  actor?: string | null;
}

/** The records seedInstance wrote, and the default client's secret in plain text (to be shown once). */
export interface SeededInstance {
  instanceId: string;
  clientId: string;
  clientSecret: string;
  resourceIds: string[];
}

/** instance_metadata of a new instance: the default password rule, the pages' languages, no identity provider. */
export const DEFAULT_INSTANCE_SETTINGS: InstanceSettings = {
  password_validators: DEFAULT_PASSWORD_VALIDATORS,
  supported_locales: ['en', 'mn'],
  identity_providers: [],
};

/**
 * Seed one instance, in the caller's transaction `m`: the instance row, its own system resources
 * (SYSTEM_RESOURCES: `urn:gatehouse:management` and `urn:gatehouse:tree` with every scope) and its default client
 * (cannot be deleted, allowed `client_credentials`, authorized on both resources and granted every scope of both).
 * Used by the first start (bootstrapIdentity, for the default instance) and by `POST /instances`. A taken name
 * violates `ux_instances_name`.
 */
export async function seedInstance(m: Sql, spec: NewInstance, box: SecretBox): Promise<SeededInstance> {
  const clientId = spec.clientId?.toLowerCase() ?? randomUUID();
  const clientSecret = spec.clientSecret ?? randomSecret();
  const actor = spec.actor ?? null;
  const [instance] = await m.rows<{ id: string }>(
    `INSERT INTO instances (name, description, is_default, multi_tenant, settings, app_metadata, created_by,
                            updated_by)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $7) RETURNING id`,
    [
      spec.name,
      spec.description ?? null,
      spec.isDefault ?? false,
      spec.multiTenant ?? false,
      JSON.stringify(spec.settings ?? DEFAULT_INSTANCE_SETTINGS),
      JSON.stringify(spec.appMetadata ?? []),
      actor,
    ],
  );
  const instanceId = instance.id;

  const resourceIds: string[] = [];
  for (const r of SYSTEM_RESOURCES) {
    const [row] = await m.rows<{ id: string }>(
      `INSERT INTO resources (instance_id, resource_type, resource_name, resource_description, identifier_url,
                              is_system, signing_algorithm, token_lifetime, skip_consent_for_first_party, created_by,
                              updated_by)
       VALUES ($1, 'api', $2, $3, $4, true, 'RS256', 3600, true, $5, $5) RETURNING id`,
      [instanceId, r.name, r.description, r.identifierUrl, actor],
    );
    resourceIds.push(row.id);
    await m.exec(
      `INSERT INTO scopes (instance_id, resource_id, scope_name, scope_description)
       SELECT $1, $2, s.name, s.description FROM jsonb_to_recordset($3::jsonb) AS s(name text, description text)`,
      [instanceId, row.id, JSON.stringify(r.scopes)],
    );
  }

  await m.exec(
    `INSERT INTO clients (id, instance_id, client_name, client_type, client_description, client_secret_enc,
                          client_metadata, is_public, is_first_party, is_global, is_default, created_by, updated_by)
     VALUES ($1, $2, 'Default client', 'non_interactive', $3, $4, $5::jsonb, false, true, true, true, $6, $6)`,
    [
      clientId,
      instanceId,
      spec.isDefault
        ? 'Created at first start; manages this instance. It cannot be deleted.'
        : 'Created with the instance; manages this instance. It cannot be deleted.',
      box.encrypt(clientSecret, sealedIn.clientSecret(clientId)),
      JSON.stringify({ grant_types: ['client_credentials'] }),
      actor,
    ],
  );
  // Authorize both system resources and grant every one of their scopes, set-based.
  await m.exec(
    `INSERT INTO client_resources (instance_id, client_id, resource_id)
     SELECT $1, $2, unnest($3::uuid[])`,
    [instanceId, clientId, resourceIds],
  );
  await m.exec(
    `INSERT INTO client_permissions (instance_id, client_id, resource_id, scope_id)
     SELECT $1, $2, s.resource_id, s.id FROM scopes s WHERE s.resource_id = ANY($3::uuid[])`,
    [instanceId, clientId, resourceIds],
  );
  // The instance's admins hold their scopes through this role (admin-roles.ts); a new instance has none yet.
  await ensureAdminRole(m, instanceId, null, actor);
  return { instanceId, clientId, clientSecret, resourceIds };
}

async function seed(m: Sql, env: BootstrapEnv, box: SecretBox): Promise<Internal> {
  const generated: string[] = [];
  const printable: [string, string][] = [];

  if (!env.BOOTSTRAP_CLIENT_ID) generated.push('BOOTSTRAP_CLIENT_ID');
  if (!env.BOOTSTRAP_CLIENT_SECRET) generated.push('BOOTSTRAP_CLIENT_SECRET');
  const adminEmail = env.BOOTSTRAP_ADMIN_EMAIL ?? DEFAULT_ADMIN_EMAIL;
  const adminPassword = env.BOOTSTRAP_ADMIN_PASSWORD ?? randomSecret();
  if (!env.BOOTSTRAP_ADMIN_PASSWORD) generated.push('BOOTSTRAP_ADMIN_PASSWORD');

  const { instanceId, clientId, clientSecret } = await seedInstance(
    m,
    {
      name: 'default',
      description: 'Default instance',
      isDefault: true,
      multiTenant: false,
      clientId: env.BOOTSTRAP_CLIENT_ID,
      clientSecret: env.BOOTSTRAP_CLIENT_SECRET,
    },
    box,
  );

  const [admin] = await m.rows<{ id: string }>(
    `INSERT INTO users (instance_id, user_email, user_name, password_hash, name, email_verified)
     VALUES ($1, $2, 'admin', $3, 'Administrator', true) RETURNING id`,
    [instanceId, adminEmail, await hashPassword(adminPassword)],
  );
  // The admin user is the default instance's first instance admin (GET /instances/:id/admins).
  await m.exec(`INSERT INTO instance_admins (instance_id, user_id) VALUES ($1, $2)`, [instanceId, admin.id]);
  await giveAdminRole(m, instanceId, null, [admin.id]);

  await m.exec(`INSERT INTO bootstrap_markers (name, instance_id, details) VALUES ($1, $2, $3::jsonb)`, [
    MARKER,
    instanceId,
    JSON.stringify({ client_id: clientId, admin_user_id: admin.id }),
  ]);

  if (generated.length) {
    printable.push(['default client id', clientId]);
    printable.push([
      'default client secret',
      generated.includes('BOOTSTRAP_CLIENT_SECRET') ? clientSecret : '(from BOOTSTRAP_CLIENT_SECRET)',
    ]);
    printable.push(['admin e-mail', adminEmail]);
    printable.push([
      'admin password',
      generated.includes('BOOTSTRAP_ADMIN_PASSWORD') ? adminPassword : '(from BOOTSTRAP_ADMIN_PASSWORD)',
    ]);
  }
  return { instanceId, clientId, adminUserId: admin.id, seeded: true, generated, printable };
}

function frame(lines: [string, string][]): string {
  const bar = '='.repeat(78);
  const body = lines.map(([k, v]) => `  ${`${k}:`.padEnd(24)}${v}`);
  return [
    '',
    bar,
    '  Gatehouse first start: generated bootstrap credentials (shown ONCE, never again)',
    bar,
    ...body,
    '',
    '  Store them now. To choose them yourself on an empty database, set BOOTSTRAP_CLIENT_ID,',
    '  BOOTSTRAP_CLIENT_SECRET, BOOTSTRAP_ADMIN_EMAIL and BOOTSTRAP_ADMIN_PASSWORD.',
    bar,
    '',
  ].join('\n');
}

/**
 * The credentials into `file`, readable by this user only: written to a private temporary file (mode 0600 from its
 * creation) and renamed over any older one (an earlier database's), so no moment exposes them to other users.
 */
function writeSecretsFile(file: string, text: string): string {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600, flag: 'wx' });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
  return file;
}

function fileNotice(file: string): string {
  const bar = '='.repeat(78);
  return [
    '',
    bar,
    '  Gatehouse first start: generated bootstrap credentials written to',
    `  ${file} (mode 0600, written once, never again)`,
    bar,
    '  Read them, store them elsewhere, then delete the file.',
    bar,
    '',
  ].join('\n');
}
