import type { Type } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsString, IsUUID, MaxLength } from 'class-validator';
import type { AppMetadataEntry } from '@gatehouse/identity-data';
import { AuditDoc } from '@gatehouse/http';
import { AppMetadata, AppMetadataEntryDto, NotNullIfPresent, NullableIfPresent } from './validation.js';

type PropertyDecorator = (target: object, key: string) => void;
const apply = (cls: Type<unknown>, key: string, ...decorators: PropertyDecorator[]) => {
  for (const d of decorators) d(cls.prototype as object, key);
};

type Noun = 'role' | 'group';

/** A create or modify body of a named record kind, as its DTO classes (below) validate it. */
export type NamedBody = Partial<Record<`${Noun}_name`, string>> &
  Partial<Record<`${Noun}_description`, string | null>> & {
    app_metadata?: AppMetadataEntry[];
    /** Create only. */
    tenant_id?: string | null;
  };

/**
 * The bodies and the OpenAPI record of a named record kind (roles, groups): `<noun>_name` (required on create),
 * `<noun>_description`, `app_metadata`, and `tenant_id` on create only.
 */
export function namedDtos(
  noun: Noun,
  example: { name: string; description: string },
  counts: string[],
  children: string[],
): { create: Type<NamedBody>; update: Type<NamedBody>; doc: Record<'v1' | 'v2', Type<unknown>> } {
  const Title = noun[0].toUpperCase() + noun.slice(1);
  const name = `${noun}_name`;
  const description = `${noun}_description`;
  const nameRules = [IsString(), IsNotEmpty(), MaxLength(255)] as PropertyDecorator[];
  const descriptionRules = [NullableIfPresent(), IsString(), MaxLength(2000)] as PropertyDecorator[];
  const descriptionDoc = ApiPropertyOptional({
    type: String,
    example: example.description,
    nullable: true,
    maxLength: 2000,
  });

  const Create = class {};
  Object.defineProperty(Create, 'name', { value: `Create${Title}Dto` });
  apply(
    Create,
    name,
    ApiProperty({
      type: String,
      example: example.name,
      maxLength: 255,
      description: 'Unique in the tenant (any case)',
    }),
    ...nameRules,
  );
  apply(Create, description, descriptionDoc, ...descriptionRules);
  apply(Create, 'app_metadata', AppMetadata());
  apply(
    Create,
    'tenant_id',
    ApiPropertyOptional({
      type: String,
      format: 'uuid',
      nullable: true,
      description: `The ${noun}'s tenant (a caller that is not global: its own, the default); null: a global ${noun}`,
    }),
    NullableIfPresent(),
    IsUUID('all'),
  );

  const Update = class {};
  Object.defineProperty(Update, 'name', { value: `Update${Title}Dto` });
  apply(
    Update,
    name,
    ApiPropertyOptional({ type: String, example: example.name, maxLength: 255 }),
    NotNullIfPresent(),
    ...nameRules,
  );
  apply(Update, description, descriptionDoc, ...descriptionRules);
  apply(Update, 'app_metadata', AppMetadata());

  const Aggregations = class extends AuditDoc {};
  Object.defineProperty(Aggregations, 'name', { value: `${Title}AggregationsDoc` });
  apply(Aggregations, 'id', ApiProperty({ type: String, format: 'uuid' }));
  apply(Aggregations, `${noun}_id`, ApiProperty({ type: String, format: 'uuid' }));
  for (const c of counts) apply(Aggregations, c, ApiProperty({ type: 'integer' }));

  const doc = (v: 'v1' | 'v2') => {
    const Doc = class extends AuditDoc {};
    Object.defineProperty(Doc, 'name', { value: `${Title}${v.toUpperCase()}Doc` });
    apply(Doc, 'id', ApiProperty({ type: String, format: 'uuid' }));
    apply(Doc, 'instance_id', ApiProperty({ type: String, format: 'uuid' }));
    apply(Doc, 'tenant_id', ApiProperty({ type: String, format: 'uuid', nullable: true }));
    apply(Doc, name, ApiProperty({ type: String, example: example.name }));
    apply(Doc, description, ApiProperty({ type: String, example: example.description, nullable: true }));
    apply(Doc, 'app_metadata', ApiProperty({ type: [AppMetadataEntryDto] }));
    apply(
      Doc,
      v === 'v1' ? 'aggregations' : 'aggregates',
      ApiPropertyOptional({
        type: () => Aggregations,
        description: 'when fields names it, or no fields are given',
      }),
    );
    apply(
      Doc,
      'links',
      ApiPropertyOptional({
        type: 'object',
        properties: Object.fromEntries(children.map((c) => [c, { type: 'string' }])),
        description: 'the child collections, when not expanded',
      }),
    );
    for (const c of children) {
      apply(
        Doc,
        c,
        ApiPropertyOptional({ type: 'array', items: { type: 'object' }, description: 'with expand=all' }),
      );
    }
    return Doc;
  };
  // Classes built here with the noun's field names: NamedBody is the type their validation guarantees.
  return {
    create: Create as Type<NamedBody>,
    update: Update as Type<NamedBody>,
    doc: { v1: doc('v1'), v2: doc('v2') },
  };
}
