import { Inject, Injectable } from '@nestjs/common';
import { Db, listPage, Params, type ListPage, type ListPlan } from '@gatehouse/db';
import { invalidRequest } from '@gatehouse/errors';
import { isEventType, eventsTable, findEvent, findUser } from '@gatehouse/identity-data';
import { show, type ApiVersion, type ListRequest } from '@gatehouse/query';
import type { Access } from '../common/access.js';
import { EVENT_COLUMNS, logRecord, type EventRow, type LogRecord } from './log.record.js';

/**
 * `total_count` of an event list counts at most this many events (Auth0 caps its log search at 1,000): an exact
 * count over millions of rows cannot answer in a request's time, a capped one reads at most this many index
 * entries. A total equal to the cap means "this many or more".
 */
export const LOG_COUNT_CAP = 10_000;

/** Names of the filter parameters of `GET /logs` per presentation (v2: camelCase, as its other parameters). */
export const LOG_FILTER_PARAMS: Record<ApiVersion, { userId: string; clientId: string }> = {
  v1: { userId: 'user_id', clientId: 'client_id' },
  v2: { userId: 'userId', clientId: 'clientId' },
};

/** The filters of an event list, parsed (every bad value is a 400 naming its parameter, before any query). */
export interface LogFilters {
  types?: string[];
  userId?: string;
  clientId?: string;
  from?: string;
  to?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A date-time with a time zone (Z or an offset): a bare date or local time would depend on the server's zone. */
const DATE_TIME_WITH_ZONE = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,6})?)?(Z|[+-]\d\d:?\d\d)$/i;

function bad(param: string, message: string) {
  return invalidRequest(`Query parameter ${param}: ${message}`, [{ field: param, message }]);
}

/** One value of a parameter; a parameter given twice is a 400 (as the common list parameters). */
function single(query: Record<string, unknown> | undefined, param: string): string | undefined {
  const value = query?.[param];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw bad(param, 'must be given once, as a plain value');
  return value;
}

function uuidParam(query: Record<string, unknown> | undefined, param: string): string | undefined {
  const value = single(query, param);
  if (value === undefined) return undefined;
  if (!UUID.test(value)) throw bad(param, `must be a uuid, got '${show(value)}'`);
  return value.toLowerCase();
}

function instantParam(query: Record<string, unknown> | undefined, param: string): string | undefined {
  const value = single(query, param);
  if (value === undefined) return undefined;
  const at = new Date(value);
  if (!DATE_TIME_WITH_ZONE.test(value) || Number.isNaN(at.getTime())) {
    throw bad(param, `must be an ISO 8601 date-time with a time zone, got '${show(value)}'`);
  }
  return value;
}

/** `type`: one event type, or several separated by commas; each must be one of the catalogue's. */
function typesParam(query: Record<string, unknown> | undefined): string[] | undefined {
  const value = single(query, 'type');
  if (value === undefined) return undefined;
  const types = [...new Set(value.split(',').map((t) => t.trim()))];
  for (const t of types) {
    if (!isEventType(t)) throw bad('type', `unknown event type '${show(t)}'`);
  }
  return types;
}

/** Parses the filters of `GET /logs` under the presentation's names. */
export function parseLogFilters(query: Record<string, unknown> | undefined, v: ApiVersion): LogFilters {
  const names = LOG_FILTER_PARAMS[v];
  const out: LogFilters = {};
  const types = typesParam(query);
  if (types) out.types = types;
  const userId = uuidParam(query, names.userId);
  if (userId) out.userId = userId;
  const clientId = uuidParam(query, names.clientId);
  if (clientId) out.clientId = clientId;
  const from = instantParam(query, 'from');
  if (from) out.from = from;
  const to = instantParam(query, 'to');
  if (to) out.to = to;
  if (from && to && new Date(from).getTime() >= new Date(to).getTime()) {
    throw bad('to', 'must be after from');
  }
  return out;
}

/**
 * `sort` of an event list: only orders an index reads in order, so a page never sorts the whole trail. Newest
 * first by default; `created_at` either way; `type` (then newest first for `type:asc`, oldest first for
 * `type:desc`: the order (instance_id, type, created_at desc) is read in, forwards or backwards), or the two
 * together in one of those orders. Ties are broken by `id`, in the direction of `created_at`.
 */
export function logOrder(raw: unknown): string {
  if (raw === undefined || raw === null || raw === '') return 'ORDER BY e.created_at DESC, e.id DESC';
  if (typeof raw !== 'string') throw bad('sort', 'must be given once, as a plain value');
  const items = raw.split(',').map((part) => {
    const [name, dir = 'asc', ...rest] = part.trim().split(':');
    const d = dir.trim().toLowerCase();
    if (rest.length || (d !== 'asc' && d !== 'desc')) {
      throw bad('sort', `'${show(part.trim())}' must be <attribute>, <attribute>:asc or <attribute>:desc`);
    }
    if (name.trim() !== 'created_at' && name.trim() !== 'type') {
      throw bad('sort', `cannot sort by '${show(name.trim())}' (created_at or type)`);
    }
    return { name: name.trim(), dir: d.toUpperCase() as 'ASC' | 'DESC' };
  });
  const flip = (d: 'ASC' | 'DESC') => (d === 'ASC' ? 'DESC' : 'ASC');
  const [first, second] = items;
  if (items.length > 2 || (second && (first.name !== 'type' || second.name !== 'created_at'))) {
    throw bad('sort', "one of created_at, type, or type then created_at ('type:asc,created_at:desc')");
  }
  if (first.name === 'created_at') return `ORDER BY e.created_at ${first.dir}, e.id ${first.dir}`;
  const time = second?.dir ?? flip(first.dir);
  if (time !== flip(first.dir)) {
    throw bad('sort', 'type and created_at go in opposite directions (the order the index is read in)');
  }
  return `ORDER BY e.type ${first.dir}, e.created_at ${time}, e.id ${time}`;
}

/**
 * The list statement of `GET /logs` for this caller (exported for the benchmark's query plans): the instance's
 * events (a restricted caller: its tenant's), the filters as conditions the indexes serve, `q` over the record's
 * columns, the order of `logOrder`, and a total counted up to LOG_COUNT_CAP.
 */
export function logListPlan(access: Access, req: ListRequest, extra: LogFilters = {}): ListPlan {
  const filters = { ...parseLogFilters(req.query, req.version), ...extra };
  const order = logOrder(req.query?.sort);
  const params = new Params();
  const conditions = eventsTable.conditions(access, params);
  if (filters.types) {
    conditions.push(
      filters.types.length === 1
        ? `e.type = ${params.add(filters.types[0])}`
        : `e.type = ANY(${params.add(filters.types)}::text[])`,
    );
  }
  if (filters.userId) conditions.push(`e.user_id = ${params.add(filters.userId)}::uuid`);
  if (filters.clientId) conditions.push(`e.client_id = ${params.add(filters.clientId)}::uuid`);
  if (filters.from) conditions.push(`e.created_at >= ${params.add(filters.from)}::timestamptz`);
  if (filters.to) conditions.push(`e.created_at < ${params.add(filters.to)}::timestamptz`);
  const { sort: _sort, ...query } = req.query ?? {};
  return {
    spec: req.spec,
    version: req.version,
    query,
    select: () => EVENT_COLUMNS,
    from: eventsTable.from,
    conditions,
    params,
    defaultOrder: order,
    countLimit: LOG_COUNT_CAP,
  };
}

/** The audit trail, read-only: events are written by the actions they record (libs/identity/data events). */
@Injectable()
export class LogsService {
  constructor(@Inject(Db) private readonly db: Db) {}

  async list(access: Access, req: ListRequest): Promise<ListPage<LogRecord>> {
    return this.page(logListPlan(access, req));
  }

  /** The events of one user (404 when the user is not in the caller's scope; a bad parameter is 400 first). */
  async listOfUser(access: Access, userId: string, req: ListRequest): Promise<ListPage<LogRecord>> {
    const plan = logListPlan(access, req, { userId: userId.toLowerCase() });
    await findUser(this.db, access, userId);
    return this.page(plan);
  }

  private async page(plan: ListPlan): Promise<ListPage<LogRecord>> {
    const page = await listPage<EventRow>(this.db, plan);
    return { ...page, rows: page.rows.map(logRecord) };
  }

  async get(access: Access, id: string): Promise<LogRecord> {
    return logRecord(await findEvent(this.db, access, id));
  }
}
