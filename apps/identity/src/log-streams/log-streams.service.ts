import { randomBytes, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { Db, listPage, Params, withConflicts, type ListPage } from '@gatehouse/db';
import { invalidRequest } from '@gatehouse/errors';
import { OutboundPolicy, OutboundRefused } from '@gatehouse/outbound';
import { SERVICE_ENV } from '@gatehouse/service';
import type { ListRequest } from '@gatehouse/query';
import {
  findLogStream,
  LOG_STREAM_COLUMNS,
  LOG_STREAM_CONFLICTS,
  logStreamsTable,
  SECRET_BOX,
  sealedIn,
  tenantExists,
  type SecretBox,
} from '@gatehouse/identity-data';
import type { Access } from '../common/access.js';
import type { LogStreamRecord } from './log-stream.record.js';

export interface LogStreamInput {
  name?: string;
  url?: string;
  event_types?: string[];
  secret?: string;
  tenant_id?: string | null;
  status?: 'active' | 'paused';
}

/** A new signing secret: 256 random bits, base64url, prefixed so it is recognisable in a secret store. */
export const newStreamSecret = () => `ghls_${randomBytes(32).toString('base64url')}`;

/**
 * Log streams: webhooks that receive the events of their instance (or of one tenant), delivered by
 * LogStreamDelivery. A caller that is not global reaches only streams of its own tenant, and its new streams are of
 * its tenant. A new stream starts at the events written from its creation on.
 */
@Injectable()
export class LogStreamsService {
  private readonly outbound: OutboundPolicy;

  constructor(
    @Inject(Db) private readonly db: Db,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
    @Inject(SERVICE_ENV) env: { OUTBOUND_ALLOWLIST?: string },
  ) {
    this.outbound = new OutboundPolicy({ allowlist: env.OUTBOUND_ALLOWLIST ?? '' });
  }

  /** 400 naming `url` when the outbound policy (the one identity providers' URLs answer to) would refuse it. */
  private checkUrl(url: string | undefined): void {
    if (url === undefined) return;
    try {
      this.outbound.check(url);
    } catch (err) {
      if (!(err instanceof OutboundRefused)) throw err;
      const message = `url must be an https URL of a public host (http and internal addresses only for what OUTBOUND_ALLOWLIST names): ${err.message}`;
      throw invalidRequest(message, [{ field: 'url', message }]);
    }
  }

  async list(access: Access, req: ListRequest): Promise<ListPage<LogStreamRecord>> {
    const p = new Params();
    return listPage<LogStreamRecord>(this.db, {
      ...req,
      select: () => LOG_STREAM_COLUMNS,
      from: logStreamsTable.from,
      conditions: logStreamsTable.conditions(access, p),
      params: p,
      tieBreak: 'ls.id',
    });
  }

  get(access: Access, id: string): Promise<LogStreamRecord> {
    return findLogStream(this.db, access, id);
  }

  async create(
    access: Access,
    input: LogStreamInput & { name: string; url: string },
  ): Promise<LogStreamRecord> {
    this.checkUrl(input.url);
    return this.db.transaction(async (tx) => {
      const tenantId = access.restricted ? access.tenantId : (input.tenant_id ?? null);
      if (access.restricted && input.tenant_id && input.tenant_id !== access.tenantId) {
        throw invalidRequest('tenant_id: a caller bound to a tenant makes streams of its own tenant only', [
          { field: 'tenant_id', message: 'not your tenant' },
        ]);
      }
      if (tenantId && !(await tenantExists(tx, access, tenantId))) {
        throw invalidRequest(`tenant_id: tenant ${tenantId} not found`, [
          { field: 'tenant_id', message: 'not found' },
        ]);
      }
      const id = randomUUID();
      const secret = input.secret ?? newStreamSecret();
      // The cursor starts after this transaction (its own creation event included): events of transactions that
      // began writing before it are not delivered; events of every later one are.
      await withConflicts(LOG_STREAM_CONFLICTS, () =>
        tx.exec(
          `INSERT INTO log_streams (id, instance_id, tenant_id, name, url, event_types, secret_enc, cursor_txid,
                                    cursor_seq, created_by, updated_by)
           VALUES ($1, $2, $3, $4, $5, $6::text[], $7, pg_current_xact_id()::text::bigint, 9223372036854775807,
                   $8, $8)`,
          [
            id,
            access.instanceId,
            tenantId,
            input.name,
            input.url,
            [...new Set(input.event_types ?? [])],
            this.box.encrypt(secret, sealedIn.logStreamSecret(id)),
            access.actor,
          ],
        ),
      );
      return { ...(await findLogStream(tx, access, id)), secret };
    });
  }

  async update(access: Access, id: string, input: LogStreamInput): Promise<LogStreamRecord> {
    this.checkUrl(input.url);
    return this.db.transaction(async (tx) => {
      const cur = await findLogStream(tx, access, id, { lock: true });
      const p = new Params([cur.id]);
      const sets: string[] = [];
      const set = (column: string, value: unknown, cast = '') =>
        sets.push(`${column} = ${p.add(value)}${cast}`);
      if (input.name !== undefined) set('name', input.name);
      if (input.url !== undefined) set('url', input.url);
      if (input.event_types !== undefined) set('event_types', [...new Set(input.event_types)], '::text[]');
      if (input.secret !== undefined)
        set('secret_enc', this.box.encrypt(input.secret, sealedIn.logStreamSecret(cur.id)));
      if (input.status === 'paused' && cur.status !== 'paused') {
        set('status', 'paused');
        set('paused_reason', 'paused by an administrator');
      }
      if (input.status === 'active' && cur.status !== 'active') {
        // resumed: from where it stopped, tried at once, its failures forgotten
        set('status', 'active');
        sets.push('paused_reason = NULL', 'failures = 0', 'last_error = NULL', 'next_attempt_at = now()');
      }
      set('updated_by', access.actor);
      await withConflicts(LOG_STREAM_CONFLICTS, () =>
        tx.exec(`UPDATE log_streams SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`, p.values),
      );
      return findLogStream(tx, access, cur.id);
    });
  }

  async remove(access: Access, id: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const cur = await findLogStream(tx, access, id, { lock: true });
      await tx.exec(`DELETE FROM log_streams WHERE id = $1`, [cur.id]);
    });
  }
}
