import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { HttpException } from '@nestjs/common';
import { DomainError, ErrorCode, invalidRequest } from '@gatehouse/errors';

export interface BodyParserOptions {
  /** Largest accepted body, in bytes-module syntax ('1mb', '100kb'). */
  limit: string;
  /** Path prefixes where no parser may run (oidc-provider reads its own bodies). */
  excludePaths: string[];
  /** Also accept `application/x-www-form-urlencoded` bodies (the token server's endpoints). */
  urlencoded: boolean;
  /**
   * Requests whose body is left unread for the route to consume as a stream (e.g. a CSV upload of a whole tree
   * version), decided per request: by method, path and Content-Type, where a path prefix is not enough.
   */
  streamed?: (req: Request) => boolean;
}

/** True when `path` is `prefix` itself or below it (`/token` covers `/token/introspection`). */
export function isUnderPrefix(path: string, prefix: string): boolean {
  const p = prefix.length > 1 && prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
  if (p === '/' || p === '') return true;
  return path === p || path.startsWith(`${p}/`);
}

const JSON_TYPE = (type: string) => type === 'application/json' || /^application\/[^;]+\+json$/.test(type);
const FORM_TYPE = (type: string) => type === 'application/x-www-form-urlencoded';

function mediaType(req: Request): string {
  return String(req.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
}

function hasBody(req: Request): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const len = Number(req.headers['content-length']);
  return Number.isFinite(len) && len > 0;
}

/**
 * Body-parser errors as our errors: malformed JSON 400, too large 413 `payload_too_large`, an unsupported
 * charset/encoding 415. Others pass through unchanged.
 */
export function mapBodyParserError(err: unknown, limit: string): unknown {
  const type = (err as { type?: unknown } | undefined)?.type;
  switch (type) {
    case 'entity.parse.failed':
      return invalidRequest('Malformed JSON body');
    case 'entity.too.large':
      return new DomainError(ErrorCode.PayloadTooLarge, `Request body is larger than the limit of ${limit}`);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new HttpException(`Unsupported body encoding or charset`, 415);
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return invalidRequest('Request body could not be read');
    default:
      return err;
  }
}

/** Deepest nesting a JSON body may have (objects and arrays); deeper bodies are 400 before any code sees them. */
export const MAX_JSON_DEPTH = 64;

/** Keys that would reach an object's prototype when copied or merged: never a field of ours. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * What is wrong with a parsed body, or undefined: nesting deeper than MAX_JSON_DEPTH, a `__proto__` /
 * `constructor` / `prototype` key at any depth (named, as an unknown field), a NUL character in a key or a string
 * (PostgreSQL text cannot hold it). Walked without recursion, so no body can exhaust the stack here.
 */
export function hostileBodyProblem(body: unknown): { field: string; message: string } | undefined {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: body, path: '', depth: 0 }];
  while (stack.length) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\0')) return { field: path || 'body', message: 'must not contain a NUL character' };
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) {
      return { field: path || 'body', message: `nested deeper than ${MAX_JSON_DEPTH} levels` };
    }
    if (Array.isArray(value)) {
      value.forEach((v, i) => stack.push({ value: v, path: `${path}[${i}]`, depth: depth + 1 }));
      continue;
    }
    for (const key of Object.keys(value)) {
      const at = path ? `${path}.${key.replaceAll('\0', '')}` : key.replaceAll('\0', '');
      if (FORBIDDEN_KEYS.has(key)) return { field: at, message: 'unknown field' };
      if (key.includes('\0')) return { field: at, message: 'must not contain a NUL character' };
      stack.push({ value: (value as Record<string, unknown>)[key], path: at, depth: depth + 1 });
    }
  }
  return undefined;
}

/**
 * JSON (and optionally form) body parsing for every path not excluded. A body with any other Content-Type
 * (or none) is answered 415 with code `invalid_request`: the status tells what is wrong, the code stays in
 * docs/contract.md's set. Requests without a body pass untouched.
 */
export function bodyParsers(opts: BodyParserOptions): RequestHandler {
  const json = express.json({
    limit: opts.limit,
    strict: true,
    type: (req) => JSON_TYPE(mediaType(req as Request)),
  });
  const form = express.urlencoded({ limit: opts.limit, extended: false, parameterLimit: 1000 });
  const accepted = opts.urlencoded
    ? 'application/json or application/x-www-form-urlencoded'
    : 'application/json';
  return (req: Request, res: Response, next: NextFunction) => {
    if (opts.excludePaths.some((p) => isUnderPrefix(req.path, p))) return next();
    if (!hasBody(req)) return next();
    if (opts.streamed?.(req)) return next();
    const type = mediaType(req);
    const done = (err?: unknown) => {
      if (err) return next(mapBodyParserError(err, opts.limit));
      const problem = hostileBodyProblem(req.body);
      if (!problem) return next();
      next(invalidRequest(`${problem.field}: ${problem.message}`, [problem]));
    };
    if (JSON_TYPE(type)) return json(req, res, done);
    if (opts.urlencoded && FORM_TYPE(type)) return form(req, res, done);
    next(
      new HttpException(`Unsupported Content-Type ${type ? `"${type}"` : '(none)'}; send ${accepted}`, 415),
    );
  };
}
