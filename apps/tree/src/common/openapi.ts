import { applyDecorators } from '@nestjs/common';
import { ApiHeader, ApiQuery } from '@nestjs/swagger';
import { ApiListParams } from '@gatehouse/http';

const fields = ApiQuery({
  name: 'fields',
  required: false,
  type: String,
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
    ApiListParams({
      q: "Where clause, e.g. `name ilike 'acc%' and depth <= 2` (attributes as in `fields`; base values)",
      sort: 'e.g. `name:asc,created_at:desc`; ties broken by id',
      totalCount: 'total_count',
      errors: [400, 404],
    }),
  );
}
