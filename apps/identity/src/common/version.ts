/**
 * The two presentations of the management API (docs/contract.md): `/api/v1` serves document 1's shapes, `/api/v2` document
 * 2's (camelCase envelope and query parameters, `aggregates`, the variant's nested metadata). One domain, two
 * presentations: services work with canonical records, presenters shape them per version.
 */
export type ApiVersion = 'v1' | 'v2';

export const API_VERSIONS: readonly ApiVersion[] = ['v1', 'v2'];

/** `/api/v1` or `/api/v2`. */
export const apiBase = (v: ApiVersion) => `/api/${v}`;

/** Route prefix of a controller (no leading slash, as Nest wants it): `api/v1/clients`. */
export const routeOf = (v: ApiVersion, path: string) => `api/${v}/${path}`;
