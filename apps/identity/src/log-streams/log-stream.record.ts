import { logStreamsTable, type LogStreamRow } from '@gatehouse/identity-data';
import { defineVersionedRecord, type VersionedAttribute } from '../common/records.js';
import type { ApiVersion } from '../common/version.js';

/** A log stream as answered: its row (never the secret, cursor or lease), plus `secret` in the create answer. */
export type LogStreamRecord = LogStreamRow & { secret?: string };

export const logStreamSpecs = defineVersionedRecord({
  name: 'log_stream',
  attributes: logStreamsTable.attributes<VersionedAttribute>({
    name: { sortColumn: 'lower(ls.name)' },
  }),
  children: { v1: [], v2: [] },
  extraFields: [{ name: 'secret' }],
});

/** One shape in both presentations (the envelope differs, the record does not). */
export const shapeLogStream = (_v: ApiVersion) => (r: LogStreamRecord) =>
  ({ ...r }) as Record<string, unknown>;
