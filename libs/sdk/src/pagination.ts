import { unwrap, type FetchResult } from './errors.js';

/**
 * The collection envelopes of the JSON APIs (libs/shared/query's envelope.ts): `/api/v1` of identity and tree
 * `{total_count?, count, has_more, limit, offset, items}`; identity's `/api/v2` the same in camelCase
 * `{totalCount?, count, hasMore, ...}`. The total comes only when asked for (`total_count=true`, v2 `totalCount=true`).
 */
export interface EnvelopeV1<T> {
  total_count?: number;
  count: number;
  has_more: boolean;
  limit: number;
  offset: number;
  items: T[];
}

export interface EnvelopeV2<T> {
  totalCount?: number;
  count: number;
  hasMore: boolean;
  limit: number;
  offset: number;
  items: T[];
}

/** One page, whichever presentation it came in. */
export interface Page<T> {
  items: T[];
  offset: number;
  limit: number;
  hasMore: boolean;
  /** Only when the total was asked for. */
  total?: number;
}

/** The paging parameters of a v1 list operation (identity /api/v1, tree), to spread into its `query`. */
export interface PageQueryV1 {
  offset: number;
  limit: number;
  total_count?: boolean;
}

/** The paging parameters of a v2 list operation (identity /api/v2). */
export interface PageQueryV2 {
  offset: number;
  limit: number;
  totalCount?: boolean;
}

/** The APIs serve at most 100 items a page (a larger `limit` is served as 100). */
export const MAX_PAGE_SIZE = 100;

export interface PageOptions {
  /** Where to start (default 0). */
  offset?: number;
  /** Items per request (default and at most 100). */
  limit?: number;
}

export function pageOfV1<T>(e: EnvelopeV1<T>): Page<T> {
  return {
    items: e.items,
    offset: e.offset,
    limit: e.limit,
    hasMore: e.has_more,
    ...(e.total_count !== undefined ? { total: e.total_count } : {}),
  };
}

export function pageOfV2<T>(e: EnvelopeV2<T>): Page<T> {
  return {
    items: e.items,
    offset: e.offset,
    limit: e.limit,
    hasMore: e.hasMore,
    ...(e.totalCount !== undefined ? { total: e.totalCount } : {}),
  };
}

/** Pages of one list operation: its items one by one, its pages, or one page with the total. */
export interface Paginator<T> {
  /** Every item from `offset` on, fetching page after page as the loop goes. */
  items(o?: PageOptions): AsyncGenerator<T, void, undefined>;
  /** Every page from `offset` on. */
  pages(o?: PageOptions): AsyncGenerator<Page<T>, void, undefined>;
  /** One page and the total number of items (the list asked with its total flag). */
  page(o?: PageOptions): Promise<Page<T> & { total: number }>;
  /** Every item, in one array. */
  all(o?: PageOptions): Promise<T[]>;
}

type Fetcher<Q, E> = (query: Q) => Promise<FetchResult<E>>;

function paginator<T, Q, E>(
  fetchPage: Fetcher<Q, E>,
  query: (offset: number, limit: number, total: boolean) => Q,
  toPage: (e: E) => Page<T>,
): Paginator<T> {
  const size = (o?: PageOptions) =>
    Math.min(Math.max(1, Math.trunc(o?.limit ?? MAX_PAGE_SIZE)), MAX_PAGE_SIZE);
  async function* pages(o?: PageOptions): AsyncGenerator<Page<T>, void, undefined> {
    const limit = size(o);
    let offset = Math.max(0, Math.trunc(o?.offset ?? 0));
    for (;;) {
      const page = toPage(unwrap(await fetchPage(query(offset, limit, false))));
      yield page;
      // has_more is computed by the server (it fetched one more row than the page); an empty page ends it too
      if (!page.hasMore || page.items.length === 0) return;
      offset += page.items.length;
    }
  }
  async function* items(o?: PageOptions): AsyncGenerator<T, void, undefined> {
    for await (const page of pages(o)) yield* page.items;
  }
  return {
    pages,
    items,
    async page(o?: PageOptions) {
      const limit = size(o);
      const offset = Math.max(0, Math.trunc(o?.offset ?? 0));
      const page = toPage(unwrap(await fetchPage(query(offset, limit, true))));
      return { ...page, total: page.total ?? 0 };
    },
    async all(o?: PageOptions) {
      const out: T[] = [];
      for await (const item of items(o)) out.push(item);
      return out;
    },
  };
}

/**
 * Pages of a `/api/v1` list operation (identity's v1, every tree list). `fetchPage` makes the call with the paging
 * parameters it is given spread into its query:
 *
 * ```ts
 * const clients = paginate((page) => gh.identity.GET('/api/v1/clients', { params: { query: { ...page, q } } }));
 * for await (const c of clients.items()) console.log(c.client_name);
 * const { items, total } = await clients.page({ offset: 20, limit: 10 });
 * ```
 */
export function paginate<T>(fetchPage: Fetcher<PageQueryV1, EnvelopeV1<T>>): Paginator<T> {
  return paginator(
    fetchPage,
    (offset, limit, total) => (total ? { offset, limit, total_count: true } : { offset, limit }),
    pageOfV1,
  );
}

/** Pages of an identity `/api/v2` list operation (camelCase envelope and `totalCount` flag); as {@link paginate}. */
export function paginateV2<T>(fetchPage: Fetcher<PageQueryV2, EnvelopeV2<T>>): Paginator<T> {
  return paginator(
    fetchPage,
    (offset, limit, total) => (total ? { offset, limit, totalCount: true } : { offset, limit }),
    pageOfV2,
  );
}
