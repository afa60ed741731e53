import { Global, Inject, Injectable, Module, type PipeTransform } from '@nestjs/common';
import { Caller, type CallerInfo } from '@gatehouse/bearer';
import { unauthorized } from '@gatehouse/errors';
import { Db, isUuid, type RecordScope } from '@gatehouse/db';
import { SERVICE_ENV } from '@gatehouse/service';
import { auditAccess } from './audit.js';

/**
 * What a management request may see and who it is, derived from the caller's token and its client row:
 * the instance, the tenant restriction of a client that is not global, and the actor of audit fields.
 */
export interface Access extends RecordScope {
  /** Instance of the calling client: every record read or written belongs to it. */
  instanceId: string;
  /** The calling client (the token's client_id). */
  clientId: string;
  /**
   * True for a client with `is_global: false`: it sees and changes only records of `tenantId` (records of other
   * tenants answer 404).
   */
  restricted: boolean;
  /** The caller's tenant (null: none). The only tenant a restricted caller reaches. */
  tenantId: string | null;
  /**
   * Multi-tenant mode (the `tenant_id` header of Get resources is honoured): the deployment's `MULTI_TENANT`
   * (default true) decides for every instance; the `instances.multi_tenant` column is not read (docs/contract.md).
   */
  multiTenant: boolean;
  /** `created_by` / `updated_by` of what this request writes: the token's subject when it is a uuid, else null. */
  actor: string | null;
  /** Scopes of the caller's token on the management API (as /tokeninfo answers them now). */
  scopes: readonly string[];
}

interface CallerRow {
  instance_id: string;
  tenant_id: string | null;
  is_global: boolean;
}

/** How long a caller's client row is reused, and how many are kept. */
export const ACCESS_CACHE_MS = 5_000;
const ACCESS_CACHE_MAX = 10_000;

/**
 * The callers' client rows, kept a few seconds: one primary-key read per caller and 5 s instead of one per
 * request. Changes made through this process drop the entry at once; changes made through another replica reach
 * this one through the ChangeFeed (LISTEN/NOTIFY), and ACCESS_CACHE_MS bounds staleness if the feed is down.
 */
@Injectable()
export class AccessCache {
  private readonly entries = new Map<string, { row: CallerRow | null; until: number }>();

  constructor(@Inject(Db) private readonly db: Db) {}

  async get(clientId: string): Promise<CallerRow | null> {
    const key = clientId.toLowerCase();
    const hit = this.entries.get(key);
    const now = Date.now();
    if (hit && hit.until > now) return hit.row;
    const [row] = await this.db.rows<CallerRow>(
      `SELECT c.instance_id, c.tenant_id, c.is_global
         FROM clients c /* unscoped: the caller's own row, which gives the scope */
        WHERE c.id = $1`,
      [key],
    );
    this.entries.delete(key);
    if (this.entries.size >= ACCESS_CACHE_MAX) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, { row: row ?? null, until: now + ACCESS_CACHE_MS });
    return row ?? null;
  }

  /** Forget a client (it changed or went). */
  forget(clientId: string): void {
    this.entries.delete(clientId.toLowerCase());
  }

  /** Forget every caller (e.g. many clients changed at once). */
  clear(): void {
    this.entries.clear();
  }
}

/** Turns the authenticated caller into its Access. */
@Injectable()
export class AccessPipe implements PipeTransform<CallerInfo | undefined, Promise<Access>> {
  private readonly multiTenant: boolean;

  constructor(
    @Inject(AccessCache) private readonly cache: AccessCache,
    @Inject(SERVICE_ENV) env: { MULTI_TENANT?: boolean },
  ) {
    this.multiTenant = env.MULTI_TENANT !== false;
  }

  async transform(caller: CallerInfo | undefined): Promise<Access> {
    if (!caller || !isUuid(caller.clientId)) throw unauthorized('The access token names no known client');
    const row = await this.cache.get(caller.clientId);
    // The client was deleted after the token was issued (and validated from the bearer cache).
    if (!row) throw unauthorized('The client of this access token no longer exists');
    // A user token acting in one tenant (a tenant's user, a tenant admin) reaches that tenant only, whatever its
    // client reaches: the token server decides the tenant (it is the client's own when the client is not global).
    const acting = caller.actingTenantId && isUuid(caller.actingTenantId) ? caller.actingTenantId : null;
    const access: Access = {
      instanceId: row.instance_id,
      clientId: caller.clientId.toLowerCase(),
      restricted: !row.is_global || acting !== null,
      tenantId: acting ? acting.toLowerCase() : row.tenant_id,
      multiTenant: this.multiTenant,
      actor: isUuid(caller.sub) ? caller.sub.toLowerCase() : null,
      scopes: caller.scopes,
    };
    // the request's writes record this caller (its transactions carry the audit context)
    auditAccess(access);
    return access;
  }
}

/** Provides the AccessCache to every feature module (one per app); the ChangeFeed (app module) keeps it in step. */
@Global()
@Module({ providers: [AccessCache], exports: [AccessCache] })
export class AccessModule {}

/** `@CallerAccess() access: Access` on a guarded route. */
export const CallerAccess = () => Caller(AccessPipe);

/** True when the caller's token holds `scope` (e.g. `clients:read_secrets`). */
export function holds(access: Access, scope: string): boolean {
  return access.scopes.includes(scope);
}
