import type { Sql } from '@gatehouse/db';
import { embedChildren as embedInto, groupByParent, wants, type ReadQuery } from '@gatehouse/query';
import { EMBED_LIMIT } from '../client-access/client-access.queries.js';
import { linkColumns, type LinkKind } from './link-kinds.js';
import { permissionColumns, type PermissionKind } from './memberships.service.js';

/** A child collection of a role or group record: the links of one kind, seen from the record. */
export interface EmbeddedChild {
  field: string;
  kind: LinkKind | PermissionKind;
  permission?: boolean;
}

/**
 * Embeds the child collections of records on `expand=all` (at most EMBED_LIMIT each, oldest first; their list
 * operations page through all), one query per child kind for the whole page.
 */
export function embedChildren(children: EmbeddedChild[]) {
  return async (db: Sql, _access: unknown, records: { id: string }[], read: ReadQuery): Promise<void> => {
    if (!read.expand || !records.length) return;
    const ids = records.map((r) => r.id);
    for (const c of children) {
      if (!wants(read.fields, c.field)) continue;
      const columns = c.permission
        ? permissionColumns(c.kind as PermissionKind)
        : linkColumns(c.kind as LinkKind);
      const found = await db.rows<Record<string, unknown> & { __owner: string }>(
        `SELECT * FROM (
           SELECT ${columns}, l.${c.kind.ownerColumn} AS __owner,
                  row_number() OVER (PARTITION BY l.${c.kind.ownerColumn} ORDER BY l.created_at, l.id) AS __rn
             FROM ${c.kind.table} l WHERE l.${c.kind.ownerColumn} = ANY($1::uuid[])) t
          WHERE __rn <= ${EMBED_LIMIT} ORDER BY created_at, id`,
        [ids],
      );
      embedInto(
        records as ({ id: string } & Record<string, unknown>)[],
        c.field,
        groupByParent(
          found,
          (f) => f.__owner,
          ({ __owner: _o, __rn: _r, ...link }) => link,
        ),
      );
    }
  };
}
