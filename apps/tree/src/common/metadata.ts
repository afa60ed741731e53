import { registerDecorator, type ValidationArguments, type ValidationOptions } from 'class-validator';
import { isUuid } from './params.js';

/**
 * The `metadata` object of the seed: `label` {label_id uuid}, `tags` (array of string) and, for trees and nodes,
 * `fields` (array of {name string, value number or string}). Anything else is refused, so a typo is a 400 rather
 * than silently stored data.
 */
export function metadataProblem(value: unknown, withFields: boolean): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'must be an object';
  const allowed = withFields ? ['label', 'tags', 'fields'] : ['label', 'tags'];
  for (const [key, v] of Object.entries(value)) {
    if (!allowed.includes(key)) return `unknown field: metadata.${key} (allowed: ${allowed.join(', ')})`;
    if (key === 'label') {
      if (v === null) continue;
      if (typeof v !== 'object' || Array.isArray(v)) return 'metadata.label must be an object {label_id}';
      for (const [lk, lv] of Object.entries(v as object)) {
        if (lk !== 'label_id') return `unknown field: metadata.label.${lk}`;
        if (lv !== null && !isUuid(lv)) return 'metadata.label.label_id must be a UUID';
      }
    } else if (key === 'tags') {
      if (!Array.isArray(v) || v.some((t) => typeof t !== 'string' || t.length > 255) || v.length > 100) {
        return 'metadata.tags must be an array of at most 100 strings';
      }
    } else if (key === 'fields') {
      if (!Array.isArray(v) || v.length > 100)
        return 'metadata.fields must be an array of at most 100 {name, value}';
      for (const [i, f] of v.entries()) {
        if (f === null || typeof f !== 'object' || Array.isArray(f))
          return `metadata.fields.${i} must be an object`;
        for (const fk of Object.keys(f)) {
          if (fk !== 'name' && fk !== 'value') return `unknown field: metadata.fields.${i}.${fk}`;
        }
        const { name, value: fv } = f as { name?: unknown; value?: unknown };
        if (typeof name !== 'string' || name.length === 0 || name.length > 255) {
          return `metadata.fields.${i}.name must be a non-empty string`;
        }
        if (!(typeof fv === 'string' || (typeof fv === 'number' && Number.isFinite(fv)))) {
          return `metadata.fields.${i}.value must be a number or a string`;
        }
      }
    }
  }
  return undefined;
}

/** class-validator decorator for `metadata`. */
export function IsTreeMetadata(opts: { fields: boolean }, validationOptions?: ValidationOptions) {
  return (object: object, propertyName: string) => {
    let last: string | undefined;
    registerDecorator({
      name: 'isTreeMetadata',
      target: object.constructor,
      propertyName,
      options: validationOptions,
      validator: {
        validate(value: unknown) {
          last = metadataProblem(value, opts.fields);
          return last === undefined;
        },
        defaultMessage(args: ValidationArguments) {
          return metadataProblem(args.value, opts.fields) ?? last ?? 'metadata is invalid';
        },
      },
    });
  };
}
