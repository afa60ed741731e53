/** The audiences of the two APIs the console calls (the system resources' identifiers). */
export const MANAGEMENT_AUDIENCE = 'urn:gatehouse:management';
export const TREE_AUDIENCE = 'urn:gatehouse:tree';

/** The management API's operation groups: `<group>:read` for GET, `<group>:write` for the rest. */
export const GROUPS = [
  'clients',
  'resources',
  'tenants',
  'roles',
  'users',
  'groups',
  'tickets',
  'instances',
] as const;
export type Group = (typeof GROUPS)[number];

/** Every scope the console may ask for; a token carries those its user holds in effect. */
export const MANAGEMENT_SCOPES = [...GROUPS.flatMap((g) => [`${g}:read`, `${g}:write`]), 'logs:read'];
export const TREE_SCOPES = ['trees:read', 'trees:write', 'settings:write'];

/** What the signed-in administrator may do: the scopes of their two access tokens. */
export class Grants {
  constructor(
    readonly management: ReadonlySet<string>,
    readonly tree: ReadonlySet<string>,
  ) {}

  static none(): Grants {
    return new Grants(new Set(), new Set());
  }

  /** Whether `scope` (`clients:write`, `trees:read`...) is in the matching token. */
  has(scope: string): boolean {
    return scope.startsWith('trees:') || scope.startsWith('settings:')
      ? this.tree.has(scope)
      : this.management.has(scope);
  }

  read(group: Group | 'trees'): boolean {
    return this.has(`${group}:read`);
  }

  write(group: Group | 'trees'): boolean {
    return this.has(`${group}:write`);
  }
}

/** The claims of a JWT (unverified: the console only reads its own token to know what to show). */
export function jwtClaims(token: string | undefined): Record<string, unknown> {
  if (!token) return {};
  const part = token.split('.')[1];
  if (!part) return {};
  try {
    const b64 = part.replace(/-/g, '+').replace(/_/g, '/');
    const json = decodeURIComponent(
      Array.from(atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4)))
        .map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
        .join(''),
    );
    const claims = JSON.parse(json) as unknown;
    return claims && typeof claims === 'object' ? (claims as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The scopes of a token response (`scope`), else of the JWT access token's `scope` claim. */
export function scopesOf(scope: string | undefined, accessToken?: string): Set<string> {
  const raw = scope ?? (jwtClaims(accessToken).scope as string | undefined) ?? '';
  return new Set(raw.split(' ').filter(Boolean));
}
