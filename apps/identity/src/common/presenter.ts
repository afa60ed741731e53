import {
  parseReadQuery,
  type ReadQuery,
  type RecordSpec,
  present,
  presentPage,
  type Shape,
} from '@gatehouse/query';
import type { ListPage } from '@gatehouse/db';
import type { ApiVersion } from './version.js';

/** What a service needs to run a list operation: the record spec and raw query of the caller's presentation. */
export interface ListRequest {
  spec: RecordSpec;
  query: Record<string, unknown> | undefined;
  version: ApiVersion;
}

/**
 * The presentation of one record type in one version: parses the query parameters by the version's names (bad
 * ones are 400 before anything is written) and shapes canonical records and pages for the answer.
 */
export class Presenter<T> {
  constructor(
    readonly version: ApiVersion,
    readonly spec: RecordSpec,
    private readonly shape: Shape<T>,
  ) {}

  /** `fields` and `expand` of a single-record operation. */
  read(query: Record<string, unknown> | undefined): ReadQuery {
    return parseReadQuery(query, this.spec, this.version);
  }

  list(query: Record<string, unknown> | undefined): ListRequest {
    // The service parses it (with the parameter offset of its own SQL) before running any query.
    return { spec: this.spec, query, version: this.version };
  }

  one(record: T, read: ReadQuery): Record<string, unknown> {
    return present(record, this.shape, this.spec, this.version, read);
  }

  page(page: ListPage<T>) {
    return presentPage(page, this.shape, this.spec, this.version);
  }
}
