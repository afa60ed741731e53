import {
  Params,
  withConflicts,
  type Columns,
  type RowOf,
  type ScopedTable,
  type Sql,
  type Table,
  type Timestamp,
} from '@gatehouse/db';
import type { AppMetadataEntry } from '@gatehouse/identity-data';
import { defineVersionedRecord, type VersionedAttribute, type VersionedSpecs } from './records.js';
import { linksOf, mapKeys } from '@gatehouse/query';
import { apiBase, type ApiVersion } from './version.js';

/**
 * Roles and groups are the same kind of record: a name unique in its instance and tenant, a description, app
 * metadata, a tenant (none: global), audit fields and counts of what is linked to it. One declaration per kind
 * (NamedKind) gives its record spec, its shape in each presentation and its SQL.
 */
export interface NamedRow {
  id: string;
  instance_id: string;
  tenant_id: string | null;
  app_metadata: AppMetadataEntry[];
  created_by: string | null;
  created_at: Timestamp;
  updated_by: string | null;
  updated_at: Timestamp;
}

export interface NamedKind<Row extends NamedRow> {
  /** `role` / `group`: the record's name, `<noun>_name`, `<noun>_description`, `aggregations.<noun>_id`. */
  noun: 'role' | 'group';
  /** Path segment under /api/<v>: `roles` / `groups`. */
  path: string;
  /** Its table: the record's attributes are the table's columns. */
  table: Table<Columns>;
  columns: string;
  aggregationColumns: string;
  /** Aggregation count columns (`agg_<name>`) and the name each has in `aggregations`. */
  counts: string[];
  /** Child collections (links when not expanded). */
  children: string[];
  find(
    db: Sql,
    scope: Parameters<ScopedTable['conditions']>[0],
    id: string,
    opts?: { lock?: boolean; aggregations?: boolean },
  ): Promise<Row>;
  /** Unique index of the name -> 409 message. */
  conflicts: Record<string, string>;
}

export type NamedRecord = Record<string, unknown> & { id: string };

/** The record spec of a kind: its attributes, children, `aggregations` (v2 `aggregates`) and `links`. */
export function namedSpecs(kind: Pick<NamedKind<NamedRow>, 'noun' | 'table' | 'children'>): VersionedSpecs {
  const a = kind.table.alias;
  return defineVersionedRecord({
    name: kind.noun,
    // Sorted case-insensitively: the unique index of the name (instance_id, tenant_id, lower(name)) serves it.
    attributes: kind.table.attributes<VersionedAttribute>({
      [`${kind.noun}_name`]: { sortColumn: `lower(${a}.${kind.noun}_name)` },
    }),
    children: { v1: kind.children, v2: kind.children },
    extraFields: [{ name: 'aggregations', v2Name: 'aggregates' }, { name: 'links' }],
  });
}

/**
 * The record of a row: its table's record columns (kind.table.record), and `aggregations` when the counts were
 * read (`aggregations.<noun>_id`, the counts, the record's audit fields).
 */
export function namedRecord(
  kind: Pick<NamedKind<NamedRow>, 'noun' | 'counts' | 'table'>,
  row: NamedRow,
): NamedRecord {
  const rec = kind.table.record(row as unknown as RowOf<Columns>) as NamedRecord;
  rec.app_metadata = row.app_metadata ?? [];
  const columns = row as unknown as Record<string, unknown>;
  // the count columns are read together (aggregationColumns) or not at all
  if (columns[`agg_${kind.counts[0]}`] !== undefined) {
    const aggregations: Record<string, unknown> = { id: row.id, [`${kind.noun}_id`]: row.id };
    for (const c of kind.counts) aggregations[c] = Number(columns[`agg_${c}`] ?? 0);
    Object.assign(aggregations, {
      created_by: row.created_by,
      created_at: row.created_at,
      updated_by: row.updated_by,
      updated_at: row.updated_at,
    });
    rec.aggregations = aggregations;
  }
  return rec;
}

/** The shape of a record in a presentation: v2 says `aggregates`; `links` to the children when not expanded. */
export function shapeNamed(kind: Pick<NamedKind<NamedRow>, 'path' | 'children'>, v: ApiVersion) {
  return (rec: NamedRecord, expand: boolean): Record<string, unknown> => {
    const out = mapKeys(rec, {
      aggregations: (x: unknown) => [v === 'v1' ? 'aggregations' : 'aggregates', x],
    });
    if (!expand) out.links = linksOf(`${apiBase(v)}/${kind.path}/${rec.id}`, kind.children);
    return out;
  };
}

export interface NamedInput {
  name?: string;
  description?: string | null;
  app_metadata?: AppMetadataEntry[];
  tenant_id?: string | null;
}

/** INSERT of a new record; returns its id. A name taken in the tenant (or among global ones): 409. */
export async function insertNamed(
  tx: Sql,
  kind: NamedKind<NamedRow>,
  row: { instanceId: string; tenantId: string | null; actor: string | null; input: NamedInput },
): Promise<string> {
  const [created] = await withConflicts(kind.conflicts, () =>
    tx.rows<{ id: string }>(
      `INSERT INTO ${kind.table.name} (instance_id, tenant_id, ${kind.noun}_name, ${kind.noun}_description,
              app_metadata, created_by, updated_by)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6, $6) RETURNING id`,
      [
        row.instanceId,
        row.tenantId,
        row.input.name,
        row.input.description ?? null,
        JSON.stringify(row.input.app_metadata ?? []),
        row.actor,
      ],
    ),
  );
  return created.id;
}

/** UPDATE of the fields given (the others keep their value). The tenant is set at creation only. */
export async function updateNamed(
  tx: Sql,
  kind: NamedKind<NamedRow>,
  current: NamedRow,
  input: NamedInput,
  actor: string | null,
): Promise<void> {
  const p = new Params([current.id]);
  const cur = current as unknown as Record<string, unknown>;
  await withConflicts(kind.conflicts, () =>
    tx.exec(
      `UPDATE ${kind.table.name}
          SET ${kind.noun}_name = ${p.add(input.name ?? cur[`${kind.noun}_name`])},
              ${kind.noun}_description = ${p.add(input.description !== undefined ? input.description : cur[`${kind.noun}_description`])},
              app_metadata = ${p.add(JSON.stringify(input.app_metadata ?? current.app_metadata ?? []))}::jsonb,
              updated_by = ${p.add(actor)}, updated_at = now()
        WHERE id = $1`,
      p.values,
    ),
  );
}
