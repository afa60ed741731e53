import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LoggerService } from '@nestjs/common';
import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';

export type { Logger } from 'pino';

export interface CreateLoggerOptions {
  serviceName: string;
  /** pino level: fatal, error, warn, info (default), debug, trace, silent. */
  level?: string;
  /** Where JSON lines go (default stdout). Tests pass a stream to read them. */
  destination?: DestinationStream;
}

/** Paths redacted from every log line: credentials in headers and in logged objects. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["proxy-authorization"]',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  ...[
    'password',
    'client_secret',
    'secret',
    'token',
    'access_token',
    'refresh_token',
    'id_token',
    'otp',
    'code_verifier',
  ].flatMap((k) => [k, `*.${k}`, `*.*.${k}`]),
];

const LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** A pino JSON logger for one service, secrets redacted. */
export function createLogger(opts: CreateLoggerOptions): Logger {
  const level = opts.level && LEVELS.has(opts.level) ? opts.level : 'info';
  const options = {
    level,
    base: { service: opts.serviceName },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  // One destination for the logger and its completion lines (pino's default: synchronous writes to stdout).
  const destination = opts.destination ?? pino.destination({ dest: 1, sync: true });
  const logger = pino({ ...options, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, destination);
  // The completion line of every request is built from known fields (a redacted URL, no header, no body), so it is
  // written without the redaction walk, which cost more than the rest of the line (a token server profile:
  // 8% of a token request), and without pino's generic serialization (the code flow's profile: most of what was
  // left of the line's cost). Same destination, the line pino wrote (completionLine).
  completionDestinations.set(logger, {
    destination,
    service: JSON.stringify(opts.serviceName),
  });
  return logger;
}

/** Where a logger made by createLogger writes, for completion lines only (see there). */
const completionDestinations = new WeakMap<Logger, { destination: DestinationStream; service: string }>();

/**
 * The JSON line pino writes for `logger[level](fields, 'request completed')` with createLogger's options (level
 * label, ISO time, the service as base): the same keys in the same order, a field left out when undefined, strings
 * as JSON.stringify writes them (as pino's own escaping does for every string a request line can hold).
 */
export function completionLine(
  level: string,
  service: string,
  id: string,
  method: string | undefined,
  url: string | undefined,
  status: number,
  responseTime: number,
): string {
  const m = method === undefined ? '' : `,"method":${JSON.stringify(method)}`;
  const u = url === undefined ? '' : `,"url":${JSON.stringify(url)}`;
  return (
    `{"level":"${level}","time":"${new Date().toISOString()}","service":${service},` +
    `"req":{"id":${JSON.stringify(id)}${m}${u}},"res":{"statusCode":${status}},` +
    `"responseTime":${responseTime},"msg":"request completed"}\n`
  );
}

const SANE_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The incoming `X-Request-Id` when it is sane (1-128 chars of [A-Za-z0-9._-]), else undefined. */
export function sanitizeRequestId(value: unknown): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return typeof v === 'string' && SANE_REQUEST_ID.test(v) ? v : undefined;
}

/** Paths whose successful requests are logged at debug only (probes and scrapes would drown the log). */
const QUIET_PATHS = new Set(['/livez', '/readyz', '/metrics']);

/** A request seen by {@link requestLogging}: `id` is its request id. */
export type IdentifiedRequest = IncomingMessage & { id?: string };

/**
 * Request id + one completion line per finished request, written with pino directly (no pino-http):
 * - the id is a sane incoming `X-Request-Id` or a new uuid, set as `req.id` and echoed in `X-Request-Id`;
 * - on finish, one line at a level chosen by status (5xx error, 4xx warn, else info; probes and the scrape
 *   debug), only when that level is enabled: `{req: {id, method, url}, res: {statusCode}, responseTime}`
 *   (responseTime in ms), message `request completed`. Nothing else is built per request.
 * Errors logged while handling a request carry its id through {@link requestLog}.
 */
export function requestLogging(logger: Logger) {
  return (req: IdentifiedRequest, res: ServerResponse, next: () => void) => {
    const id = identify(req, res);
    const start = performance.now();
    res.once('finish', () => logCompletion(logger, req, res.statusCode, id, start));
    next();
  };
}

/** Gives `req` its request id (a sane incoming `X-Request-Id` or a new uuid), echoed in `X-Request-Id`. */
export function identify(req: IdentifiedRequest, res: ServerResponse): string {
  const id = sanitizeRequestId(req.headers['x-request-id']) ?? randomUUID();
  req.id = id;
  res.setHeader('X-Request-Id', id);
  return id;
}

/**
 * The one completion line of a finished request (see {@link requestLogging}), written only when the level its
 * status calls for is enabled; `start` is the `performance.now()` of its arrival.
 */
export function logCompletion(
  logger: Logger,
  req: IncomingMessage,
  status: number,
  id: string,
  start: number,
): void {
  // Info off (LOG_LEVEL=warn): a success costs one level check (debug is off too), no path lookup.
  if (status < 400 && !logger.isLevelEnabled('info')) return;
  const level: LevelWithSilent =
    status >= 500 ? 'error' : status >= 400 ? 'warn' : QUIET_PATHS.has(pathOf(req.url)) ? 'debug' : 'info';
  if (!logger.isLevelEnabled(level)) return;
  const responseTime = Math.round((performance.now() - start) * 1000) / 1000;
  const url = redactUrl(req.url);
  const to = completionDestinations.get(logger);
  if (to) {
    to.destination.write(completionLine(level, to.service, id, req.method, url, status, responseTime));
    return;
  }
  logger[level](
    { req: { id, method: req.method, url }, res: { statusCode: status }, responseTime },
    'request completed',
  );
}

/** Query parameters whose values are credentials: never written to a log line, whatever the route. */
const SECRET_QUERY_PARAMS = new Set([
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'id_token_hint',
  'subject_token',
  'actor_token',
  'client_secret',
  'client_assertion',
  'assertion',
  'password',
  'code',
  'code_verifier',
  'otp',
  'ticket',
  'user_code',
  'device_code',
]);

/** The URL as logged: credential-bearing query values replaced by `[redacted]` (a URL without `?` as it is). */
export function redactUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  const q = url.indexOf('?');
  if (q === -1 || !mayNameSecret(url, q + 1)) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  let changed = false;
  for (const name of new Set(params.keys())) {
    if (SECRET_QUERY_PARAMS.has(name.toLowerCase())) {
      params.set(name, '[redacted]');
      changed = true;
    }
  }
  return changed ? `${url.slice(0, q)}?${params.toString()}` : url;
}

/**
 * Whether a parameter of the query starting at `from` may be a credential: one of SECRET_QUERY_PARAMS by name, or a
 * name that is only known once decoded (`%` or `+` in it). A query naming none as written is logged as it is
 * without being parsed (an authorization request's long query, on every request of a code flow).
 */
function mayNameSecret(url: string, from: number): boolean {
  // URLSearchParams drops a leading `?` of what it is given (`/x??code=...` names `code`)
  if (url.charCodeAt(from) === 0x3f) return true;
  let start = from;
  while (start <= url.length) {
    let end = url.indexOf('&', start);
    if (end === -1) end = url.length;
    let nameEnd = url.indexOf('=', start);
    if (nameEnd === -1 || nameEnd > end) nameEnd = end;
    const name = url.slice(start, nameEnd);
    if (name.includes('%') || name.includes('+') || SECRET_QUERY_PARAMS.has(name.toLowerCase())) return true;
    start = end + 1;
  }
  return false;
}

function pathOf(url: string | undefined): string {
  if (url === undefined) return '';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** A child of `logger` carrying the request's id as `reqId` (the logger itself when the request has none). */
export function requestLog(req: unknown, logger: Logger): Logger {
  const id = (req as IdentifiedRequest | undefined)?.id;
  return typeof id === 'string' ? logger.child({ reqId: id }) : logger;
}

/** Nest's LoggerService on pino, so Nest's own lines (bootstrap, routes) are JSON too. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...params: unknown[]) {
    this.write('info', message, params);
  }
  error(message: unknown, ...params: unknown[]) {
    // Nest calls error(message, stack?, context?)
    const context =
      params.length > 0 && typeof params[params.length - 1] === 'string' ? params.pop() : undefined;
    const stack = typeof params[0] === 'string' ? params[0] : undefined;
    const obj: Record<string, unknown> = { context };
    if (message instanceof Error) obj['err'] = message;
    else if (stack) obj['stack'] = stack;
    this.logger.error(obj, message instanceof Error ? message.message : stringify(message));
  }
  warn(message: unknown, ...params: unknown[]) {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]) {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]) {
    this.write('trace', message, params);
  }
  fatal(message: unknown, ...params: unknown[]) {
    this.write('fatal', message, params);
  }

  private write(level: 'info' | 'warn' | 'debug' | 'trace' | 'fatal', message: unknown, params: unknown[]) {
    const context =
      params.length > 0 && typeof params[params.length - 1] === 'string' ? params.pop() : undefined;
    if (message instanceof Error) this.logger[level]({ context, err: message }, message.message);
    else this.logger[level]({ context }, stringify(message));
  }
}

function stringify(message: unknown): string {
  if (typeof message === 'string') return message;
  try {
    return JSON.stringify(message);
  } catch {
    return String(message);
  }
}
