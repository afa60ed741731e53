import type { Type } from '@nestjs/common';
import type { ApiVersion } from './version.js';

/** Gives a controller class made per version its own name (`ClientsV1Controller`): logs, OpenAPI operation ids. */
export function versioned<T extends Type<unknown>>(cls: T, name: string, v: ApiVersion): T {
  Object.defineProperty(cls, 'name', { value: `${name}${v.toUpperCase()}Controller` });
  return cls;
}

/** Query parameters as Express parsed them (validated by the presenters). */
export type QueryParams = Record<string, unknown>;
