export { Audited } from '@gatehouse/db';

/** `app_metadata` is an array of `{key, value}` strings (document 1, part 2). */
export interface AppMetadataEntry {
  key: string;
  value: string;
}
