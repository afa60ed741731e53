import type { ServerResponse } from 'node:http';
import { SetMetadata, applyDecorators } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import {
  ApiProperty,
  ApiPropertyOptional,
  ApiQuery,
  ApiResponse,
  DocumentBuilder,
  SwaggerModule,
  getSchemaPath,
  type OpenAPIObject,
} from '@nestjs/swagger';
import { ErrorCode } from '@gatehouse/errors';

export interface OpenApiOptions {
  title: string;
  description: string;
  version: string;
  /** Declare the `bearer` security scheme (JWT access tokens). Default true. */
  bearer?: boolean;
}

/** Metadata key set by `@Public()`; the bearer guard skips routes carrying it. */
export const IS_PUBLIC_KEY = 'gatehouse:public';

/** Marks a route (or a whole controller) as needing no authentication. */
export const Public = () => SetMetadata(IS_PUBLIC_KEY, true);

export class ErrorDetailDto {
  @ApiPropertyOptional({ description: 'The request field concerned (dotted path)', example: 'client_name' })
  field?: string;

  @ApiProperty({ example: 'client_name must be a string' })
  message: string;
}

/** The error object every JSON API answers with (docs/contract.md). */
export class ErrorResponseDto {
  @ApiProperty({ enum: ErrorCode, enumName: 'ErrorCode', example: ErrorCode.InvalidRequest })
  code: ErrorCode;

  @ApiProperty({ example: 'client_name must be a string; unknown field: foo' })
  message: string;

  @ApiPropertyOptional({ type: [ErrorDetailDto] })
  details?: ErrorDetailDto[];
}

/** The audit fields every record of the JSON APIs carries (a base class of the records' OpenAPI shapes). */
export class AuditDoc {
  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  created_by: string | null;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  updated_by: string | null;

  @ApiProperty({ type: String, format: 'date-time' })
  updated_at: string;
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'invalid_request: a field is missing, has the wrong type or is unknown; the message names it',
  401: 'unauthorized: missing, malformed, expired or revoked bearer token',
  403: 'forbidden: the token lacks the scope, or the operation is not allowed on this record',
  404: 'not_found: no such record or route',
  405: 'method_not_allowed: known path, wrong method (see the Allow header)',
  409: 'conflict: duplicate, or a state that forbids the change',
  413: 'payload_too_large: the body is over the limit',
  415: 'invalid_request: the body is not JSON',
  429: 'too_many_requests: check X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset',
  500: 'internal_error: the message carries an error id',
  501: 'not_implemented',
  503: 'service_unavailable: the database or the token server is unreachable',
};

/** Documents the listed error statuses of a route with the error object schema. */
export function ApiErrorResponses(...statuses: number[]) {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({ status, description: ERROR_DESCRIPTIONS[status] ?? 'Error', type: ErrorResponseDto }),
    ),
  );
}

/** How a service words the list parameters that differ between its documents. */
export interface ListQueryDocs {
  /** Description of `q`, with an example over the service's own attributes. */
  q: string;
  /** Description of `sort`, with an example. */
  sort: string;
  /** The name of the total flag in this presentation (`total_count`, or `totalCount` in identity's v2). */
  totalCount: string;
  totalCountDescription?: string;
  /** Error statuses of the list operation. */
  errors: number[];
}

/** `q`, `sort`, `offset`, `limit` and the total flag of a list operation, as both JSON APIs take them. */
export function ApiListParams(docs: ListQueryDocs) {
  return applyDecorators(
    ApiQuery({ name: 'q', required: false, type: String, description: docs.q }),
    ApiQuery({ name: 'sort', required: false, type: String, description: docs.sort }),
    ApiQuery({ name: 'offset', required: false, schema: { type: 'integer', minimum: 0, default: 0 } }),
    ApiQuery({
      name: 'limit',
      required: false,
      schema: { type: 'integer', minimum: 1, default: 10 },
      description: 'Page size; above 100 is served as 100',
    }),
    ApiQuery({
      name: docs.totalCount,
      required: false,
      schema: { type: 'boolean', default: false },
      ...(docs.totalCountDescription ? { description: docs.totalCountDescription } : {}),
    }),
    ApiErrorResponses(...docs.errors),
  );
}

/** Conventions every service shares, appended to its OpenAPI description. */
export const COMMON_API_NOTES = `
## Common behaviour

- Errors are \`{"code", "message", "details"?}\`; unknown body fields are rejected (400 \`invalid_request\`).
- A body must be JSON (\`application/json\`); another Content-Type is answered 415 with code \`invalid_request\`.
  Bodies over the size limit are answered 413 \`payload_too_large\`.
- A known path with a wrong method is answered 405 \`method_not_allowed\` with an \`Allow\` header. \`HEAD\` is
  allowed wherever \`GET\` is; \`OPTIONS\` on a known path answers 204 with the \`Allow\` header.
- Rate limits apply per endpoint (method and route) and per caller (bearer token, Basic client id, else IP
  address). Every response carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\`
  (epoch seconds); over the limit the answer is 429 \`too_many_requests\` with \`Retry-After\`.
  \`/livez\`, \`/readyz\` and \`/metrics\` are not rate limited and carry no rate-limit headers.
- Every response carries \`X-Request-Id\` (the caller's, when it is 1-128 characters of \`[A-Za-z0-9._-]\`).
`;

/** Builds the OpenAPI document (3.1) from the app's controllers. */
export function buildOpenApiDocument(app: NestExpressApplication, opts: OpenApiOptions): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle(opts.title)
    .setDescription(`${opts.description.trim()}\n${COMMON_API_NOTES}`)
    .setVersion(opts.version);
  if (opts.bearer !== false) {
    builder.addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'bearer');
  }
  const document = SwaggerModule.createDocument(app, builder.build(), { extraModels: [ErrorResponseDto] });
  addCommonResponses(document);
  addRequestExamples(document);
  return document;
}

type Schema = Record<string, unknown>;

/**
 * The example of a JSON body of `schema`: the properties that carry an `example` (objects and arrays of objects
 * followed, their own examples used), and every required property (its example, else its default or first enum
 * value). Properties without an example are left out, so the example is a request a caller can send as it is rather
 * than Swagger UI's fill-in of every field with "string". Undefined when nothing has an example, or a required
 * property has no value (a body naming the caller's own records by id).
 */
export function requestExample(document: OpenAPIObject, schema: unknown, depth = 0): unknown {
  if (!schema || typeof schema !== 'object' || depth > 8) return undefined;
  let s = schema as Schema;
  if (typeof s.$ref === 'string') {
    s = (document.components?.schemas?.[s.$ref.replace('#/components/schemas/', '')] ?? {}) as Schema;
  }
  if (Array.isArray(s.allOf) && s.allOf.length === 1) return requestExample(document, s.allOf[0], depth + 1);
  if (s.example !== undefined) return s.example;
  if (s.type === 'array') {
    const item = requestExample(document, s.items, depth + 1);
    return item === undefined ? undefined : [item];
  }
  const properties = s.properties as Record<string, Schema> | undefined;
  if (!properties) return s.default ?? (Array.isArray(s.enum) ? s.enum[0] : undefined);
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  const out: Record<string, unknown> = {};
  for (const [name, prop] of Object.entries(properties)) {
    const value = requestExample(document, prop, depth + 1);
    // a required property nobody gave a value (an id of the caller's records): no example of this body
    if (value === undefined && required.has(name)) return undefined;
    if (value !== undefined && (required.has(name) || hasOwnExample(document, prop))) out[name] = value;
  }
  return Object.keys(out).length ? out : undefined;
}

/** Whether a property (or what it refers to, or any of its parts) carries an example of its own. */
function hasOwnExample(document: OpenAPIObject, schema: Schema, depth = 0): boolean {
  if (depth > 8) return false;
  if (schema.example !== undefined) return true;
  if (typeof schema.$ref === 'string') {
    const target = document.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')];
    return !!target && hasOwnExample(document, target as Schema, depth + 1);
  }
  if (Array.isArray(schema.allOf))
    return schema.allOf.some((x) => hasOwnExample(document, x as Schema, depth + 1));
  if (schema.items) return hasOwnExample(document, schema.items as Schema, depth + 1);
  const properties = schema.properties as Record<string, Schema> | undefined;
  return !!properties && Object.values(properties).some((p) => hasOwnExample(document, p, depth + 1));
}

/**
 * Every JSON request body gets an explicit example (requestExample), which Swagger UI shows and "Try it out" sends
 * instead of a fill-in of every field. Each one is a valid request (tested per app by sending it).
 */
function addRequestExamples(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths ?? {})) {
    for (const method of ['put', 'post', 'patch'] as const) {
      const media = (item?.[method]?.requestBody as { content?: Record<string, Schema> } | undefined)
        ?.content?.['application/json'];
      if (!media || media.example !== undefined || media.examples !== undefined) continue;
      const example = requestExample(document, media.schema);
      if (example !== undefined) media.example = example;
    }
  }
}

/**
 * Statuses every operation may answer, documented once here rather than on each route: 429 and 500 everywhere; 400
 * wherever the request has parameters or a body (an undecodable path segment, a malformed query or body); 413 and 415
 * wherever it takes a body (over the size limit; another Content-Type); 401 wherever a bearer token is required.
 */
function addCommonResponses(document: OpenAPIObject): void {
  const schema = { $ref: getSchemaPath(ErrorResponseDto) };
  for (const item of Object.values(document.paths ?? {})) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const) {
      const op = item?.[method];
      if (!op) continue;
      op.responses ??= {};
      const statuses = ['429', '500'];
      if ((op.parameters?.length ?? 0) > 0 || op.requestBody) statuses.push('400');
      if (op.requestBody) statuses.push('413', '415');
      if (op.security?.some((s) => 'bearer' in s)) statuses.push('401');
      for (const status of statuses) {
        op.responses[status] ??= {
          description: ERROR_DESCRIPTIONS[Number(status)],
          content: { 'application/json': { schema } },
        };
      }
    }
  }
}

/**
 * CSP of Swagger UI: its scripts are files of its own (the init code included, no inline script, no eval); its
 * styles are partly inline (the page's <style>, React's style attributes) and its icons data: URIs; "Try it out"
 * calls this origin only. No framing anywhere (clickjacking of an authorized "Try it out").
 */
export const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** Serves Swagger UI at `/docs` and the document at `/docs/openapi.json`, with the headers of a page. */
export function setupOpenApi(app: NestExpressApplication, opts: OpenApiOptions): void {
  app.use('/docs', (_req: unknown, res: ServerResponse, next: () => void) => {
    res.setHeader('Content-Security-Policy', DOCS_CSP);
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    next();
  });
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app, opts), {
    jsonDocumentUrl: 'docs/openapi.json',
    raw: ['json'],
    customSiteTitle: opts.title,
  });
}
