import { IncomingMessage } from 'node:http';
import * as querystring from 'node:querystring';
import { inheritClientAddress } from '@gatehouse/http';

export type Params = Record<string, string | string[]>;

/** Largest body the OAuth endpoints accept (oidc-provider itself stops at 56 KiB). */
export const OAUTH_BODY_LIMIT = 56 * 1024;

export class BodyError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Read the whole request body (at most `limit` bytes). Plain 'data'/'end' events rather than the stream's async
 * iterator, which costs a promise and a microtask per chunk on the token endpoints' hot path.
 */
export function readBody(req: IncomingMessage, limit = OAUTH_BODY_LIMIT): Promise<Buffer> {
  const declared = req.headers['content-length'] ? Number(req.headers['content-length']) : undefined;
  if (declared !== undefined && declared > limit) {
    return Promise.reject(
      new BodyError(413, 'payload_too_large', `request body is larger than ${limit} bytes`),
    );
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const done = (err?: Error) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (err) reject(err);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) {
        // what is left of the body node drops once the answer is written
        done(new BodyError(413, 'payload_too_large', `request body is larger than ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received));
    };
    const onError = (err: Error) => done(err);
    const onClose = () => {
      if (!req.complete) done(new Error('request aborted'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

const mediaType = (req: IncomingMessage) =>
  (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();

const isJsonType = (t: string) => t === 'application/json' || /^application\/[\w.+-]+\+json$/.test(t);

/**
 * Parameters of a POST body, JSON or form-encoded alike. JSON values must be strings, numbers or booleans (or
 * arrays of them, for repeated parameters such as `resource`); anything else is 400 invalid_request.
 */
export function parseParams(req: IncomingMessage, body: Buffer): Params {
  const params = parseBody(req, body);
  // PostgreSQL text cannot hold NUL, and no OAuth parameter has one: refuse it here, whatever the parameter.
  for (const [key, value] of Object.entries(params)) {
    const values = Array.isArray(value) ? value : [value];
    if (key.includes('\0') || values.some((v) => v.includes('\0'))) {
      throw new BodyError(
        400,
        'invalid_request',
        `${key.replaceAll('\0', '')} must not contain a NUL character`,
      );
    }
    // A lone surrogate (JSON allows "\ud800") is no text: it cannot be form-encoded for oidc-provider (a URIError,
    // which was a 500; found by tools/reliability/fuzz.mjs) nor stored.
    if (!isWellFormed(key) || values.some((v) => !isWellFormed(v))) {
      throw new BodyError(
        400,
        'invalid_request',
        'parameter names and values must be well-formed Unicode text',
      );
    }
  }
  return params;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const isWellFormed = (s: string) => !LONE_SURROGATE.test(s);

function parseBody(req: IncomingMessage, body: Buffer): Params {
  const type = mediaType(req);
  if (body.length === 0) return {};
  if (isJsonType(type)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      throw new BodyError(400, 'invalid_request', 'malformed JSON body');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new BodyError(400, 'invalid_request', 'the JSON body must be an object');
    }
    const out: Params = Object.create(null) as Params;
    for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
      if (value === null || value === undefined) continue;
      if (Array.isArray(value)) {
        if (!value.every(isScalar)) throw new BodyError(400, 'invalid_request', `${key} must be a string`);
        out[key] = value.map(String);
      } else if (isScalar(value)) {
        out[key] = String(value);
      } else if (key === 'options' && typeof value === 'object') {
        // document 2's passwordless `options` object: flattened as options.<name>
        for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
          if (v === null || v === undefined) continue;
          if (!isScalar(v)) throw new BodyError(400, 'invalid_request', `options.${k} must be a string`);
          out[`options.${k}`] = String(v);
        }
      } else {
        throw new BodyError(400, 'invalid_request', `${key} must be a string`);
      }
    }
    return out;
  }
  if (type === 'application/x-www-form-urlencoded' || type === '') {
    return querystring.parse(body.toString('utf8')) as Params;
  }
  throw new BodyError(
    415,
    'invalid_request',
    'unsupported content type: send application/x-www-form-urlencoded or application/json',
  );
}

function isScalar(v: unknown): v is string | number | boolean {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

/**
 * A fresh request carrying `params` as a form-encoded body, for oidc-provider (which reads form bodies only and
 * must read the stream itself). Method, URL, headers and socket are the original request's.
 */
export function replayAsForm(req: IncomingMessage, params: Params): IncomingMessage {
  const body = Buffer.from(querystring.stringify(params), 'utf8');
  const copy = new IncomingMessage(req.socket);
  copy.method = req.method;
  copy.url = req.url;
  copy.httpVersion = req.httpVersion;
  copy.httpVersionMajor = req.httpVersionMajor;
  copy.httpVersionMinor = req.httpVersionMinor;
  const headers = { ...req.headers };
  delete headers['transfer-encoding'];
  headers['content-type'] = 'application/x-www-form-urlencoded';
  headers['content-length'] = String(body.length);
  copy.headers = headers;
  // A complete message: when it auto-destroys after being read, Node must not treat it as aborted (which would
  // destroy the shared socket).
  copy.complete = true;
  inheritClientAddress(copy, req);
  copy.push(body);
  copy.push(null);
  return copy;
}

/** First value of a parameter (repeated parameters are arrays). */
export function one(params: Params, name: string): string | undefined {
  const v = params[name];
  return Array.isArray(v) ? v[0] : v;
}
