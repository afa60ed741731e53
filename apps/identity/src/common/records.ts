import { defineRecord, type AttributeSpec, type FieldNameInput, type RecordSpec } from '@gatehouse/query';
import type { ApiVersion } from './version.js';

/** An attribute of a record in one or both presentations. */
export interface VersionedAttribute extends Omit<AttributeSpec, 'v2Name'> {
  /** Only in this presentation (default: both). */
  only?: ApiVersion;
  /** SQL expression under v2 when it differs (e.g. a metadata object of another shape). */
  v2Column?: string;
  /** SQL expression `sort` orders by when it differs from `column` (e.g. `lower(name)`, to use an index). */
  sortColumn?: string;
}

/** The ORDER BY expression of an attribute (its `sortColumn`, else its column). */
export const sortExpression = (attr: AttributeSpec) =>
  (attr as AttributeSpec & { sortColumn?: string }).sortColumn ?? attr.column;

export interface VersionedRecordInput {
  name: string;
  attributes: VersionedAttribute[];
  children: Record<ApiVersion, string[]>;
  /** Selectable names that are not columns (`aggregations`, `links`, secrets shown on single reads). */
  extraFields?: { name: string; v2Name?: string; only?: ApiVersion }[];
}

export type VersionedSpecs = Record<ApiVersion, RecordSpec>;

/**
 * One record declared once, as seen by each presentation. Document 2 keeps record field names as its seed writes
 * them (snake_case, `user_fullName`), so v2 names equal v1 names except where given (`aggregations` is `aggregates`);
 * fields a presentation does not have are neither selectable nor filterable there.
 */
export function defineVersionedRecord(input: VersionedRecordInput): VersionedSpecs {
  const build = (v: ApiVersion): RecordSpec =>
    defineRecord({
      name: `${input.name}:${v}`,
      attributes: input.attributes
        .filter((a) => !a.only || a.only === v)
        .map(({ only: _only, v2Column, ...a }) => ({
          ...a,
          column: v === 'v2' && v2Column ? v2Column : a.column,
          v2Name: a.name,
        })),
      children: input.children[v].map((name): FieldNameInput => ({ name, v2Name: name })),
      extraFields: (input.extraFields ?? [])
        .filter((f) => !f.only || f.only === v)
        .map((f): FieldNameInput => ({ name: f.name, v2Name: f.v2Name ?? f.name })),
    });
  return { v1: build('v1'), v2: build('v2') };
}

/** The audit attributes `created_by`, `created_at`, `updated_by`, `updated_at` of table alias `t`. */
export function auditAttributes(t: string): VersionedAttribute[] {
  return [
    { name: 'created_by', column: `${t}.created_by`, type: 'uuid' },
    { name: 'created_at', column: `${t}.created_at`, type: 'datetime' },
    { name: 'updated_by', column: `${t}.updated_by`, type: 'uuid' },
    { name: 'updated_at', column: `${t}.updated_at`, type: 'datetime' },
  ];
}
