/**
 * The table of routes an app serves: method + path pattern (Express 5 / path-to-regexp 8 syntax, as Nest
 * registers them). Built once after `app.init()` from the Express router, plus patterns declared for raw
 * handlers mounted outside Nest (e.g. oidc-provider's `POST /token`).
 *
 * Used for: the 405 `Allow` header, the per-endpoint rate-limit key and the `route` label of the metrics
 * (a pattern, never a raw path, so label cardinality stays bounded).
 */
export interface RouteEntry {
  method: string;
  pattern: string;
  regex: RegExp;
}

/** The `route` label / rate-limit endpoint for requests that match no known route. */
export const UNMATCHED_ROUTE = '<unmatched>';

const REGEX_SPECIAL = /[.+?^$()[\]|\\/]/;

/**
 * Compiles a route pattern to a RegExp the way Express 5 matches it by default: case-insensitive, an
 * optional trailing slash. Supports `:param` (one segment), `*wildcard` (one or more segments), `{...}`
 * optional groups and `\` escapes.
 */
export function compilePattern(pattern: string): RegExp {
  let out = '';
  let i = 0;
  while (i < pattern.length) {
    const ch = pattern[i];
    if (ch === '\\' && i + 1 < pattern.length) {
      out += escapeChar(pattern[i + 1]);
      i += 2;
    } else if (ch === ':' || ch === '*') {
      const name = readName(pattern, i + 1);
      out += ch === ':' ? '([^/]+?)' : '(.+)';
      i += 1 + name.length;
    } else if (ch === '{') {
      out += '(?:';
      i++;
    } else if (ch === '}') {
      out += ')?';
      i++;
    } else {
      out += escapeChar(ch);
      i++;
    }
  }
  if (out.endsWith('\\/')) out = out.slice(0, -2);
  return new RegExp(`^${out}\\/?$`, 'i');
}

function readName(pattern: string, start: number): string {
  if (pattern[start] === '"') {
    const end = pattern.indexOf('"', start + 1);
    return end === -1 ? pattern.slice(start) : pattern.slice(start, end + 1);
  }
  const m = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(pattern.slice(start));
  return m ? m[0] : '';
}

function escapeChar(ch: string): string {
  return REGEX_SPECIAL.test(ch) ? `\\${ch}` : ch;
}

/** Parses `'POST /token'` into method and pattern. */
export function parseRouteSpec(spec: string): { method: string; pattern: string } {
  const m = /^\s*([A-Za-z]+)\s+(\/\S*)\s*$/.exec(spec);
  if (!m) throw new Error(`Invalid route "${spec}": expected "<METHOD> /path"`);
  return { method: m[1].toUpperCase(), pattern: m[2] };
}

/** What a request's method and path resolve to, computed once per distinct `method path` and cached. */
export interface RouteMatch {
  /** The pattern serving this method, else the pattern of any route on the path (a 405), else undefined. */
  readonly pattern: string | undefined;
  /** The metrics `route` label: `pattern`, or {@link UNMATCHED_ROUTE}. */
  readonly label: string;
  /** The rate-limit endpoint: `'<METHOD> <pattern>'`, or {@link UNMATCHED_ROUTE}. */
  readonly endpoint: string;
}

/** Distinct `method path` pairs remembered by {@link RouteTable.match} before the cache starts over. */
const MATCH_CACHE_SIZE = 10_000;

/**
 * The first path segment of a pattern when it is literal (lower case: matching is case-insensitive), else
 * undefined (a parameter, wildcard, optional group or escape there: the pattern may match any first segment).
 */
function literalFirstSegment(pattern: string): string | undefined {
  if (!pattern.startsWith('/')) return undefined;
  const end = pattern.indexOf('/', 1);
  const segment = end === -1 ? pattern.slice(1) : pattern.slice(1, end);
  return /[:*{}\\]|[^\x20-\x7e]/.test(segment) ? undefined : segment.toLowerCase();
}

/**
 * The first segment of a request path (lower case), or undefined when the path does not start with `/` or the
 * segment is not printable ASCII (where lower-casing and the regexes' case-insensitivity could differ).
 */
function firstSegment(path: string): string | undefined {
  if (!path.startsWith('/')) return undefined;
  const end = path.indexOf('/', 1);
  const segment = end === -1 ? path.slice(1) : path.slice(1, end);
  return /[^\x20-\x7e]/.test(segment) ? undefined : segment.toLowerCase();
}

export class RouteTable {
  private readonly entries: RouteEntry[] = [];
  private readonly matches = new Map<string, RouteMatch>();
  /**
   * The entries that can match a path, by the path's first segment, in registration order: those whose pattern
   * starts with that literal segment and those that can match any (`wildcards`). A path no pattern starts with
   * (an interaction's `/interaction/<uid>/...`, a unique path each time) is then unmatched without a regex.
   */
  private byFirstSegment = new Map<string, RouteEntry[]>();
  private wildcards: RouteEntry[] = [];
  /** Whether the index above is behind `entries` (rebuilt at the next look-up). */
  private stale = false;

  add(method: string, pattern: string): void {
    const m = method.toUpperCase();
    if (this.entries.some((e) => e.method === m && e.pattern === pattern)) return;
    this.entries.push({ method: m, pattern, regex: compilePattern(pattern) });
    this.matches.clear();
    this.stale = true;
  }

  private index(): void {
    this.stale = false;
    const literal = new Map<string, RouteEntry[]>();
    for (const e of this.entries) {
      const segment = literalFirstSegment(e.pattern);
      if (segment !== undefined && !literal.has(segment)) literal.set(segment, []);
    }
    this.wildcards = this.entries.filter((e) => literalFirstSegment(e.pattern) === undefined);
    for (const [segment, list] of literal) {
      for (const e of this.entries) {
        const own = literalFirstSegment(e.pattern);
        if (own === undefined || own === segment) list.push(e);
      }
    }
    this.byFirstSegment = literal;
  }

  /** The entries that can match `path`, in registration order (all of them for a path without a leading `/`). */
  private candidates(path: string): readonly RouteEntry[] {
    if (this.stale) this.index();
    const segment = firstSegment(path);
    if (segment === undefined) return this.entries;
    return this.byFirstSegment.get(segment) ?? this.wildcards;
  }

  /**
   * `resolve`, falling back to `resolveAnyMethod`, with the derived metrics label and rate-limit key, cached per
   * `method path` (bounded: the cache starts over past 10,000 distinct pairs), so a request walks no regexes
   * when its path was seen before.
   */
  match(method: string, path: string): RouteMatch {
    const m = method.toUpperCase();
    const key = `${m} ${path}`;
    let hit = this.matches.get(key);
    if (hit === undefined) {
      const pattern = this.resolve(m, path) ?? this.resolveAnyMethod(path);
      hit = {
        pattern,
        label: pattern ?? UNMATCHED_ROUTE,
        endpoint: pattern === undefined ? UNMATCHED_ROUTE : `${m} ${pattern}`,
      };
      // A path no route can match is answered without a regex: not worth a cache entry (such paths are mostly
      // one-off, an interaction's uid in each).
      if (this.candidates(path).length === 0) return hit;
      if (this.matches.size >= MATCH_CACHE_SIZE) this.matches.clear();
      this.matches.set(key, hit);
    }
    return hit;
  }

  addSpec(spec: string): void {
    const { method, pattern } = parseRouteSpec(spec);
    this.add(method, pattern);
  }

  get size(): number {
    return this.entries.length;
  }

  list(): readonly RouteEntry[] {
    return this.entries;
  }

  /**
   * The pattern serving `method path`, first registered wins (as in Express). HEAD falls back to GET routes,
   * `ALL` routes match every method. Undefined when no route of that method matches.
   */
  resolve(method: string, path: string): string | undefined {
    const m = method.toUpperCase();
    const entries = this.candidates(path);
    const hit =
      entries.find((e) => (e.method === m || e.method === 'ALL') && e.regex.test(path)) ??
      (m === 'HEAD' ? entries.find((e) => e.method === 'GET' && e.regex.test(path)) : undefined);
    return hit?.pattern;
  }

  /** The pattern of any route on this path (whatever its method), for labelling 405 answers. */
  resolveAnyMethod(path: string): string | undefined {
    return this.candidates(path).find((e) => e.regex.test(path))?.pattern;
  }

  /** The methods served on `path` (empty when the path is unknown). */
  methodsFor(path: string): string[] {
    const methods = new Set<string>();
    for (const e of this.candidates(path)) if (e.regex.test(path)) methods.add(e.method);
    return [...methods];
  }

  /**
   * Fills the table from an Express 5 application's router: every layer with a route (what Nest controllers
   * and `httpAdapter.get(...)` register). Middleware layers (`app.use`) are not routes and are skipped.
   */
  loadFromExpress(expressApp: unknown): void {
    const router = (expressApp as { router?: { stack?: unknown[] } }).router;
    for (const layer of router?.stack ?? []) {
      const route = (layer as { route?: { path?: unknown; methods?: Record<string, boolean> } }).route;
      if (!route?.methods) continue;
      const paths = Array.isArray(route.path) ? route.path : [route.path];
      for (const p of paths) {
        if (typeof p !== 'string') continue;
        for (const [method, on] of Object.entries(route.methods)) {
          if (on) this.add(method === '_all' ? 'ALL' : method, p);
        }
      }
    }
  }
}
