import { applyDecorators, type Type } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiOkResponse,
  ApiProperty,
  ApiPropertyOptional,
  getSchemaPath,
} from '@nestjs/swagger';
import { AuditDoc } from '@gatehouse/http';
import { LANGUAGES } from './language.js';
import { TreeMetadataDoc, VersionMetadataDoc } from './metadata.dto.js';

/** OpenAPI shapes of the answers (the services build plain objects of exactly these shapes). */

const LINKS = {
  type: 'object',
  additionalProperties: { type: 'string' },
  description: 'Paths of related operations (self, child lists when not embedded, translations, ...)',
} as const;

export class NodeAggregationsDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) tree_node_id: string;
  @ApiProperty({ description: 'Number of children' }) child_nodes: number;
}

export class ChildNodeDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() code: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ type: () => TreeMetadataDoc }) metadata: TreeMetadataDoc;
  @ApiProperty() depth: number;
  @ApiProperty() leaf: boolean;
  @ApiProperty() enabled: boolean;
}

export class NodeDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) tree_id: string;
  @ApiProperty({ format: 'uuid' }) tree_version_id: string;
  @ApiProperty() code: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ type: () => TreeMetadataDoc }) metadata: TreeMetadataDoc;
  @ApiProperty({ description: '0 for a root' }) depth: number;
  @ApiProperty({ description: 'true exactly when the node has no children' }) leaf: boolean;
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) parent_id: string | null;
  @ApiProperty() enabled: boolean;
  @ApiProperty({ type: () => NodeAggregationsDoc }) aggregations: NodeAggregationsDoc;
  @ApiPropertyOptional({ type: () => [ChildNodeDoc], description: 'With expand=all (at most 100)' })
  child_nodes?: ChildNodeDoc[];
  @ApiProperty(LINKS) links: Record<string, string>;
}

export class VersionAggregationsDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) tree_version_id: string;
  @ApiProperty({ description: 'Depth levels in use (max depth + 1; 0 when empty)' }) levels: number;
  @ApiProperty() nodes: number;
}

export class VersionDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) tree_id: string;
  @ApiProperty({ example: 'v1' }) version: string;
  @ApiProperty({ type: String, nullable: true }) name: string | null;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ type: () => VersionMetadataDoc }) metadata: VersionMetadataDoc;
  @ApiProperty() enabled: boolean;
  @ApiProperty({ type: () => VersionAggregationsDoc }) aggregations: VersionAggregationsDoc;
  @ApiPropertyOptional({
    type: () => [NodeDoc],
    description: 'With expand=all: the first 100 nodes, depth-first',
  })
  nodes?: NodeDoc[];
  @ApiProperty(LINKS) links: Record<string, string>;
}

export class TreeAggregationsDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) tree_id: string;
  @ApiProperty() versions: number;
  @ApiProperty({ description: 'Nodes in all versions' }) nodes: number;
}

export class TreeDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() code: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ type: () => TreeMetadataDoc }) metadata: TreeMetadataDoc;
  @ApiProperty() enabled: boolean;
  @ApiProperty({ type: String, format: 'date-time', description: 'Same as created_at' }) created_date: string;
  @ApiProperty({ type: String, format: 'date-time', description: 'Same as updated_at' }) updated_date: string;
  @ApiProperty({ type: () => TreeAggregationsDoc }) aggregations: TreeAggregationsDoc;
  @ApiPropertyOptional({ type: () => [VersionDoc], description: 'With expand=all (at most 100)' })
  versions?: VersionDoc[];
  @ApiProperty(LINKS) links: Record<string, string>;
}

export class TranslationDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid', description: 'Id of the translated tree, version or node' })
  label_id: string;
  @ApiProperty({ enum: LANGUAGES }) language: string;
  @ApiProperty({ type: String, nullable: true }) name: string | null;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty(LINKS) links: Record<string, string>;
}

export class SettingsDoc {
  @ApiProperty({ enum: ['development', 'staging', 'production'] }) environment: string;
}

export class HealthDoc {
  @ApiProperty({ example: 'gatehouse-tree' }) server_name: string;
  @ApiProperty({ example: '0.1.0' }) server_version: string;
  @ApiProperty({ enum: ['Active', 'Warning', 'Error'] }) server_status: string;
  @ApiProperty() server_description: string;
}

export class ImportResultDoc {
  @ApiProperty({ description: 'Nodes created' }) imported: number;
  @ApiProperty({ description: 'Nodes deleted first (replace=true)' }) replaced: number;
  @ApiProperty({ description: 'Nodes in the version now' }) nodes: number;
}

/** 200 with the collection envelope of `model`. */
export function ApiCollection(model: Type<unknown>) {
  return applyDecorators(
    ApiExtraModels(model),
    ApiOkResponse({
      description: 'Collection envelope (`total_count` only with total_count=true)',
      schema: {
        type: 'object',
        required: ['count', 'has_more', 'limit', 'offset', 'items'],
        properties: {
          total_count: { type: 'integer' },
          count: { type: 'integer' },
          has_more: { type: 'boolean' },
          limit: { type: 'integer' },
          offset: { type: 'integer' },
          items: { type: 'array', items: { $ref: getSchemaPath(model) } },
        },
      },
    }),
  );
}
