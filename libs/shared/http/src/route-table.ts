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

export class RouteTable {
  private readonly entries: RouteEntry[] = [];
  private readonly matches = new Map<string, RouteMatch>();

  add(method: string, pattern: string): void {
    const m = method.toUpperCase();
    if (this.entries.some((e) => e.method === m && e.pattern === pattern)) return;
    this.entries.push({ method: m, pattern, regex: compilePattern(pattern) });
    this.matches.clear();
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
    const hit =
      this.entries.find((e) => (e.method === m || e.method === 'ALL') && e.regex.test(path)) ??
      (m === 'HEAD' ? this.entries.find((e) => e.method === 'GET' && e.regex.test(path)) : undefined);
    return hit?.pattern;
  }

  /** The pattern of any route on this path (whatever its method), for labelling 405 answers. */
  resolveAnyMethod(path: string): string | undefined {
    return this.entries.find((e) => e.regex.test(path))?.pattern;
  }

  /** The methods served on `path` (empty when the path is unknown). */
  methodsFor(path: string): string[] {
    const methods = new Set<string>();
    for (const e of this.entries) if (e.regex.test(path)) methods.add(e.method);
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
