import { listPage, Params, type Db, type ListPage, type Sql } from '@gatehouse/db';
import { wants, type ReadQuery, type ListRequest } from '@gatehouse/query';
import type { Access } from './access.js';
import {
  insertNamed,
  namedRecord,
  updateNamed,
  type NamedInput,
  type NamedKind,
  type NamedRecord,
  type NamedRow,
} from './named-records.js';
import { tenantForNewRecord } from './tenants.js';

/** Children of a record, embedded on `expand=all` (at most EMBED_LIMIT each), by the feature that owns them. */
export type EmbedChildren = (
  db: Db,
  access: Access,
  records: NamedRecord[],
  read: ReadQuery,
) => Promise<void>;

/**
 * Create, read, list, modify and delete of a named record (roles, groups) in the caller's scope: a caller that is not
 * global creates in its own tenant and sees only its tenant's records.
 */
export class NamedService {
  constructor(
    private readonly db: Db,
    private readonly kind: NamedKind<NamedRow>,
    private readonly embed: EmbedChildren = async () => undefined,
    /** Runs in the delete's transaction before the row goes (groups leave their nestings). */
    private readonly beforeDelete: (tx: Sql, row: NamedRow) => Promise<void> = async () => undefined,
    /** Runs in the create's transaction after the row is written (groups get their ancestry row). */
    private readonly afterCreate: (tx: Sql, row: NamedRow) => Promise<void> = async () => undefined,
  ) {}

  async list(access: Access, req: ListRequest): Promise<ListPage<NamedRecord>> {
    const params = new Params();
    const page = await listPage<NamedRow>(this.db, {
      ...req,
      select: (list) =>
        wants(list.fields, 'aggregations')
          ? `${this.kind.columns}, ${this.kind.aggregationColumns}`
          : this.kind.columns,
      from: this.kind.table.from,
      conditions: this.kind.table.conditions(access, params),
      params,
    });
    const records = page.rows.map((r) => namedRecord(this.kind, r));
    await this.embed(this.db, access, records, page.list);
    return { ...page, rows: records };
  }

  async get(access: Access, id: string, read: ReadQuery): Promise<NamedRecord> {
    const row = await this.kind.find(this.db, access, id, {
      aggregations: wants(read.fields, 'aggregations'),
    });
    const rec = namedRecord(this.kind, row);
    await this.embed(this.db, access, [rec], read);
    return rec;
  }

  async create(access: Access, input: NamedInput, read: ReadQuery): Promise<NamedRecord> {
    const id = await this.db.transaction(async (tx) => {
      const tenantId = await tenantForNewRecord(tx, access, input.tenant_id);
      const created = await insertNamed(tx, this.kind, {
        instanceId: access.instanceId,
        tenantId,
        actor: access.actor,
        input,
      });
      await this.afterCreate(tx, await this.kind.find(tx, access, created));
      return created;
    });
    return this.get(access, id, read);
  }

  async update(access: Access, id: string, input: NamedInput, read: ReadQuery): Promise<NamedRecord> {
    await this.db.transaction(async (tx) => {
      const current = await this.kind.find(tx, access, id, { lock: true });
      await updateNamed(tx, this.kind, current, input, access.actor);
    });
    return this.get(access, id, read);
  }

  /** Deletes the record and every link to it; tokens issued through it lose those scopes at once. */
  async remove(access: Access, id: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const current = await this.kind.find(tx, access, id, { lock: true });
      await this.beforeDelete(tx, current);
      await tx.exec(`DELETE FROM ${this.kind.table.name} WHERE id = $1`, [current.id]);
    });
  }
}
