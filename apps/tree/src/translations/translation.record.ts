import { defineRecord } from '@gatehouse/query';

/** What `q`, `sort` and `fields` know about a translation (SQL alias `x`). */
export const translationSpec = defineRecord({
  name: 'translation',
  attributes: [
    { name: 'id', column: 'x.id', type: 'uuid' },
    { name: 'label_id', column: 'x.label_id', type: 'uuid' },
    { name: 'language', column: 'x.language', type: 'string' },
    { name: 'name', column: 'x.name', type: 'string' },
    { name: 'description', column: 'x.description', type: 'string' },
    { name: 'created_by', column: 'x.created_by', type: 'uuid' },
    { name: 'created_at', column: 'x.created_at', type: 'datetime' },
    { name: 'updated_by', column: 'x.updated_by', type: 'uuid' },
    { name: 'updated_at', column: 'x.updated_at', type: 'datetime' },
  ],
  extraFields: ['links'],
});

export interface TranslationRecord {
  id: string;
  /** The translated record (tree, version or node): the "label" whose name and description this translates. */
  label_id: string;
  language: string;
  name: string | null;
  description: string | null;
  created_by: string | null;
  created_at: Date;
  updated_by: string | null;
  updated_at: Date;
  links: Record<string, string>;
}
