import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LoggerService } from '@nestjs/common';
import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';
import { pinoHttp } from 'pino-http';

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
  return pino(
    {
      level,
      base: { service: opts.serviceName },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    opts.destination,
  );
}

const SANE_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The incoming `X-Request-Id` when it is sane (1-128 chars of [A-Za-z0-9._-]), else undefined. */
export function sanitizeRequestId(value: unknown): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return typeof v === 'string' && SANE_REQUEST_ID.test(v) ? v : undefined;
}

/** Paths whose successful requests are not logged (probes and scrapes would drown the log). */
const QUIET_PATHS = new Set(['/livez', '/readyz', '/metrics']);

/**
 * pino-http middleware: request id from a sane `X-Request-Id` or a new uuid, echoed in the response header;
 * `req.log` is a child logger carrying `reqId`; one line per finished request (level by status).
 */
export function requestLogging(logger: Logger) {
  return pinoHttp({
    logger,
    // req.log carries only `reqId`; the request itself is logged once, on the completion line.
    quietReqLogger: true,
    genReqId: (req: IncomingMessage, res: ServerResponse) => {
      const id = sanitizeRequestId(req.headers['x-request-id']) ?? randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    customLogLevel: (req: IncomingMessage, res: ServerResponse, err?: Error): LevelWithSilent => {
      if (err || res.statusCode >= 500) return 'error';
      if (res.statusCode >= 400) return 'warn';
      const path = (req.url ?? '').split('?')[0];
      return QUIET_PATHS.has(path) ? 'debug' : 'info';
    },
    serializers: {
      req: (req: { id: unknown; method: string; url: string; headers: Record<string, unknown> }) => ({
        id: req.id,
        method: req.method,
        url: req.url,
        userAgent: req.headers?.['user-agent'],
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  });
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
