import { AsyncLocalStorage } from 'node:async_hooks';
import {
  Inject,
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
  type OnModuleInit,
} from '@nestjs/common';
import { Db, type TransactionSettings } from '@gatehouse/db';
import { HTTP_FOUNDATION, type HttpFoundation } from '@gatehouse/http';
import type { Request } from 'express';
import { tap, type Observable } from 'rxjs';
import { CALLER_KEY, type CallerInfo } from '@gatehouse/bearer';
import { EVENTS_OF_THIS_TRANSACTION, type EventActor, type EventInput } from '@gatehouse/identity-data';

/** The setting a management transaction carries its audit context in (read by the `events_audit` trigger). */
export const AUDIT_SETTING = 'gatehouse.audit';

/** Who made a management write, from where: what each of its events records (docs/events.md). */
export interface AuditContext {
  actor_type: EventActor['type'];
  actor_id: string | null;
  via_client_id: string | null;
  ip: string | null;
  user_agent: string | null;
  instance_id: string;
  tenant_id: string | null;
}

/**
 * What the audit context takes from the caller's Access (access.ts hands it over through `auditAccess`; a type of
 * its own keeps this module free of access.ts, which imports it).
 */
interface AuditedCaller {
  instanceId: string;
  tenantId: string | null;
  clientId: string;
}

/** The request being served, and once its caller is known, the caller's Access. */
interface AuditRequest {
  req: Request & Record<string, unknown>;
  access?: AuditedCaller;
  /** The audit context as the `gatehouse.audit` setting (JSON), made at the first transaction of the request. */
  setting?: string;
}

const requests = new AsyncLocalStorage<AuditRequest>();

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Opens the request's audit scope around the route (after the bearer guard): the caller's Access, once the
 * AccessPipe has made it, is what every transaction of the request records its writes as (`auditSettings`, which
 * the app module installs on the Db). Service code never passes the context on.
 */
@Injectable()
export class AuditInterceptor implements NestInterceptor {
  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (ctx.getType() !== 'http') return next.handle();
    const req = ctx.switchToHttp().getRequest<AuditRequest['req']>();
    // reads write nothing: no scope to carry
    if (!WRITES.has(req.method)) return next.handle();
    writesInFlight++;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      // The storage is enabled only while a write is in flight: an enabled AsyncLocalStorage makes node track a
      // context on every promise of the process (a promise hook), which reads would pay for nothing. A write whose
      // caller went away before it ended never gets here: the storage then stays enabled (costlier, never wrong).
      if (--writesInFlight === 0) requests.disable();
    };
    // Nest binds the handler to the async context `handle()` is called in (bindAsyncScope)
    return requests.run({ req }, () => next.handle()).pipe(tap({ complete: end, error: end }));
  }
}

let writesInFlight = 0;

/** Called by the AccessPipe: the request's writes are made by this caller. */
export function auditAccess(access: AuditedCaller): void {
  const store = requests.getStore();
  if (store) {
    store.access = access;
    store.setting = undefined;
  }
}

/** The audit context of the request being served, or undefined outside a management request. */
export function auditContext(): AuditContext | undefined {
  const store = requests.getStore();
  if (!store?.access) return undefined;
  const { req, access } = store;
  const caller = req[CALLER_KEY] as CallerInfo | undefined;
  const clientId = access.clientId;
  const sub = caller?.sub?.toLowerCase();
  const isUser = sub !== undefined && sub !== clientId;
  const ua = req.headers['user-agent'];
  return {
    actor_type: isUser ? 'user' : 'client',
    actor_id: isUser ? sub : clientId,
    via_client_id: isUser ? clientId : null,
    ip: req.ip ?? null,
    user_agent: ua ? ua.slice(0, 512) : null,
    instance_id: access.instanceId,
    tenant_id: access.tenantId,
  };
}

/** The Db's transaction settings (Db.useTransactionSettings): the audit context of the request, if any. */
export function auditSettings(): Record<string, string> | undefined {
  const store = requests.getStore();
  if (!store?.access) return undefined;
  store.setting ??= JSON.stringify(auditContext());
  return { [AUDIT_SETTING]: store.setting };
}

/**
 * An event of the request being served, with its actor, source and scope (for writes the trigger cannot see, e.g.
 * an administrator's unlock); undefined outside a management request.
 */
export function auditEvent(
  event: Omit<EventInput, 'instanceId' | 'actor' | 'ip' | 'userAgent'> & { instanceId?: string },
): EventInput | undefined {
  const ctx = auditContext();
  if (!ctx) return undefined;
  return {
    ...event,
    instanceId: event.instanceId ?? ctx.instance_id,
    tenantId: event.tenantId ?? ctx.tenant_id,
    actor: { type: ctx.actor_type, id: ctx.actor_id, viaClientId: ctx.via_client_id },
    ip: ctx.ip,
    userAgent: ctx.user_agent,
  };
}

/**
 * Installs the audit context on every transaction of the service's Db (`auditSettings`), and counts the events a
 * management transaction wrote (its trigger's, which this process does not see otherwise) on `gatehouse_events_total`
 * once the transaction has committed.
 */
@Injectable()
export class AuditSettings implements OnModuleInit {
  constructor(
    @Inject(Db) private readonly db: Db,
    @Inject(HTTP_FOUNDATION) private readonly foundation: HttpFoundation,
  ) {}

  onModuleInit(): void {
    const counter = this.foundation.metrics.events;
    const settings: TransactionSettings = Object.assign(() => auditSettings(), {
      commitRead: {
        text: EVENTS_OF_THIS_TRANSACTION,
        afterCommit: (rows: Record<string, unknown>[]) => {
          for (const w of rows) counter.labels(String(w.type), String(w.outcome)).inc(Number(w.n));
        },
      },
    });
    this.db.useTransactionSettings(settings);
  }
}
