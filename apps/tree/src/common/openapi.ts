import { applyDecorators } from '@nestjs/common';
import { ApiHeader, ApiQuery } from '@nestjs/swagger';
import { ApiErrorResponses } from '@gatehouse/http';

const fields = ApiQuery({
  name: 'fields',
  required: false,
  description: 'Comma-separated top-level attributes to return (unknown name: 400)',
});
const expand = ApiQuery({
  name: 'expand',
  required: false,
  enum: ['all'],
  description: '`all` embeds child collections (at most 100 items each; `links` keeps the rest reachable)',
});
const acceptLanguage = ApiHeader({
  name: 'Accept-Language',
  required: false,
  description:
    '`mn-MN`, `mn_MN`, `en-US`, `en-GB`/`en_UK`...: translated name and description, base values as fallback',
});

/** Query parameters of single-record reads, creates and updates. */
export function ApiReadQuery() {
  return applyDecorators(fields, expand, acceptLanguage);
}

/** Query parameters of list operations. */
export function ApiListQuery() {
  return applyDecorators(
    fields,
    expand,
    acceptLanguage,
    ApiQuery({
      name: 'q',
      required: false,
      description:
        "Where clause, e.g. `name ilike 'acc%' and depth <= 2` (attributes as in `fields`; base values)",
    }),
    ApiQuery({
      name: 'sort',
      required: false,
      description: 'e.g. `name:asc,created_at:desc`; ties broken by id',
    }),
    ApiQuery({ name: 'offset', required: false, schema: { type: 'integer', minimum: 0, default: 0 } }),
    ApiQuery({
      name: 'limit',
      required: false,
      schema: { type: 'integer', minimum: 1, default: 10 },
      description: 'Page size; above 100 is served as 100',
    }),
    ApiQuery({ name: 'total_count', required: false, schema: { type: 'boolean', default: false } }),
    ApiErrorResponses(400, 404),
  );
}
