import { applyDecorators, type Type } from '@nestjs/common';
import { ApiExtraModels, ApiQuery, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ApiListParams } from '@gatehouse/http';
import type { ApiVersion } from './version.js';

const fields = ApiQuery({
  name: 'fields',
  required: false,
  type: String,
  description: 'Comma-separated top-level attributes to return (an unknown name is 400)',
});
const expand = ApiQuery({
  name: 'expand',
  required: false,
  enum: ['all'],
  description:
    '`all` embeds the child collections (at most 100 items each; their list operations page through the rest); ' +
    'without it they are linked under `links`',
});

/** Query parameters of single-record reads, creates and updates. */
export const ApiReadQuery = () => applyDecorators(fields, expand);

/** Query parameters of list operations, named as the version names them. */
export function ApiListQuery(v: ApiVersion) {
  return applyDecorators(
    fields,
    expand,
    ApiListParams({
      q:
        "Where clause over the record's attributes, e.g. `client_name ilike 'web%' and is_public = false` " +
        '(or, and, not, parentheses, = != <> < <= > >=, like, ilike, in (...), is [not] null; dotted names reach ' +
        'into metadata objects); compiled to parameterized SQL; at most 2,000 characters',
      sort: 'e.g. `client_name:asc,created_at:desc`; ties broken by id',
      totalCount: v === 'v2' ? 'totalCount' : 'total_count',
      totalCountDescription: 'Include the number of matching records',
      errors: [400],
    }),
  );
}

/** 200 with the collection envelope of the version around `item`. */
export function ApiCollection(item: Type<unknown>, v: ApiVersion, description?: string) {
  const total = v === 'v2' ? 'totalCount' : 'total_count';
  const hasMore = v === 'v2' ? 'hasMore' : 'has_more';
  return applyDecorators(
    ApiExtraModels(item),
    ApiResponse({
      status: 200,
      description: description ?? `Collection envelope (${v})`,
      schema: {
        type: 'object',
        required: ['count', hasMore, 'limit', 'offset', 'items'],
        properties: {
          [total]: { type: 'integer', description: `only with ${total}=true` },
          count: { type: 'integer', description: 'items in this response' },
          [hasMore]: { type: 'boolean', description: 'more items exist after this page' },
          limit: { type: 'integer' },
          offset: { type: 'integer' },
          items: { type: 'array', items: { $ref: getSchemaPath(item) } },
        },
      },
    }),
  );
}

/** A response carrying one record. */
export const ApiRecord = (item: Type<unknown>, status: 200 | 201, description?: string) =>
  ApiResponse({ status, type: item, description });

/** 204 No Content. */
export const ApiNoContent = (description: string) => ApiResponse({ status: 204, description });
