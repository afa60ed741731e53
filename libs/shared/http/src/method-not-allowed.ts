import type { RouteTable } from './route-table.js';

const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * The `Allow` header value for a known path, or undefined when no route serves the path (a 404).
 *
 * Decisions (documented in every service's OpenAPI description):
 * - HEAD is listed whenever GET is: Express answers HEAD with the GET handler, without a body.
 * - OPTIONS is always listed for a known path: an OPTIONS request that no handler takes is answered
 *   204 with the same `Allow` header (as Express does by itself).
 * - An `ALL` route (Express `app.all`) allows every method, so it never produces a 405.
 */
export function allowedMethods(table: RouteTable, path: string): string[] | undefined {
  const methods = new Set(table.methodsFor(path));
  if (methods.size === 0) return undefined;
  if (methods.has('ALL')) return [...ORDER];
  if (methods.has('GET')) methods.add('HEAD');
  methods.add('OPTIONS');
  return [...methods].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

function rank(method: string): number {
  const i = ORDER.indexOf(method);
  return i === -1 ? ORDER.length : i;
}

export type RouteMiss =
  | { kind: 'not_found' }
  | { kind: 'options'; allow: string[] }
  | { kind: 'method_not_allowed'; allow: string[] };

/** What to answer when routing found no handler for `method path`. */
export function classifyRouteMiss(table: RouteTable, method: string, path: string): RouteMiss {
  const allow = allowedMethods(table, path);
  if (!allow) return { kind: 'not_found' };
  const m = method.toUpperCase();
  if (m === 'OPTIONS') return { kind: 'options', allow };
  // A route of this method exists but did not answer (it passed the request on): nothing to offer.
  if (allow.includes(m)) return { kind: 'not_found' };
  return { kind: 'method_not_allowed', allow };
}
