import { iso, Params, type Sql, type Timestamp } from '@gatehouse/db';
import { notFound } from '@gatehouse/errors';
import type { AppMetadataEntry } from '../entities/audit.js';
import type { InstanceSettings } from '../entities/instance.entity.js';
import type { MfaPolicy } from '../entities/mfa-policy.js';

/**
 * The `instances` table (alias `i`). An instance is the outermost scope: it has no instance_id of its own, so it is
 * no ScopedTable. Which instances a caller reaches is an InstanceReach: every one (a global caller of the default
 * instance, in multi-instance mode) or its own alone.
 */
export const INSTANCES_FROM = 'instances i';

/** The instances a caller reaches: `all`, or only `instanceId` (its client's instance). */
export interface InstanceReach {
  instanceId: string;
  all: boolean;
}

/** The conditions confining alias `i` to the reach, their parameters added to `p` (none when it reaches all). */
export function instanceConditions(reach: InstanceReach, p: Params): string[] {
  return reach.all ? [] : [`i.id = ${p.add(reach.instanceId)}`];
}

/** An instances row as INSTANCE_COLUMNS reads it (timestamps as ISO text). */
export interface InstanceRow {
  id: string;
  name: string;
  description: string | null;
  is_default: boolean;
  multi_tenant: boolean;
  settings: InstanceSettings;
  app_metadata: AppMetadataEntry[];
  /** MFA policy (null: `optional`). */
  mfa: MfaPolicy | null;
  created_by: string | null;
  created_at: Timestamp;
  updated_by: string | null;
  updated_at: Timestamp;
}

export type InstanceRowWithCounts = InstanceRow & {
  agg_clients?: number;
  agg_tenants?: number;
  agg_resources?: number;
  agg_users?: number;
  agg_roles?: number;
};

export const INSTANCE_COLUMNS = `i.id, i.name, i.description, i.is_default, i.multi_tenant, i.settings, i.app_metadata, i.mfa,
  i.created_by, ${iso('i.created_at')} AS created_at, i.updated_by, ${iso('i.updated_at')} AS updated_at`;

/** The real counts of an instance's `aggregates` (alias `i`): every record of the instance, whatever its tenant. */
export const INSTANCE_AGGREGATION_COLUMNS = `(SELECT count(*) FROM clients x WHERE x.instance_id = i.id)::int AS agg_clients,
  (SELECT count(*) FROM tenants x WHERE x.instance_id = i.id)::int AS agg_tenants,
  (SELECT count(*) FROM resources x WHERE x.instance_id = i.id)::int AS agg_resources,
  (SELECT count(*) FROM users x WHERE x.instance_id = i.id)::int AS agg_users,
  (SELECT count(*) FROM roles x WHERE x.instance_id = i.id)::int AS agg_roles`;

/** The instance `id` within the reach, or 404. `lock` holds a row lock until the transaction ends. */
export async function findInstance(
  db: Sql,
  reach: InstanceReach,
  id: string,
  opts: { lock?: boolean; aggregations?: boolean } = {},
): Promise<InstanceRowWithCounts> {
  const p = new Params([id]);
  const where = ['i.id = $1', ...instanceConditions(reach, p)].join(' AND ');
  const [row] = await db.rows<InstanceRowWithCounts>(
    `SELECT ${INSTANCE_COLUMNS}${opts.aggregations ? `, ${INSTANCE_AGGREGATION_COLUMNS}` : ''}
       FROM ${INSTANCES_FROM} WHERE ${where}${opts.lock ? ' FOR UPDATE OF i' : ''}`,
    p.values,
  );
  if (!row) throw notFound(`Instance ${id} not found`);
  return row;
}

/** True when `instanceId` is the default instance (the one seeded at first start). */
export async function isDefaultInstance(db: Sql, instanceId: string): Promise<boolean> {
  const [row] = await db.rows<{ is_default: boolean }>(`SELECT is_default FROM instances WHERE id = $1`, [
    instanceId,
  ]);
  return row?.is_default === true;
}

/** The ids among `userIds` that are users of the instance `instanceId` (whatever their tenant). */
export async function usersOfInstance(db: Sql, instanceId: string, userIds: string[]): Promise<string[]> {
  const found = await db.rows<{ id: string }>(
    `SELECT u.id FROM users u /* scoped: the instance was found in the caller's reach */
      WHERE u.id = ANY($1::uuid[]) AND u.instance_id = $2`,
    [userIds, instanceId],
  );
  return found.map((u) => u.id);
}
