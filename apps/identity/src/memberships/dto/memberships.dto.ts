import { type Type } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsUUID } from 'class-validator';
import { AuditDoc } from '@gatehouse/http';

const MAX_ITEMS = 100;
const ids = () => (target: object, key: string) => {
  ApiProperty({ type: [String], format: 'uuid', minItems: 1, maxItems: MAX_ITEMS })(target, key);
  IsArray()(target, key);
  ArrayNotEmpty()(target, key);
  ArrayMaxSize(MAX_ITEMS)(target, key);
  IsUUID('all', { each: true })(target, key);
};

/** `{"users": [uuid]}`: Role Members, Group Members. */
export class UserIdsDto {
  @ids()
  users: string[];
}

/** `{"roles": [uuid]}`: User Roles, Group Roles. */
export class RoleIdsDto {
  @ids()
  roles: string[];
}

/** `{"groups": [uuid]}`: User Groups, Nested Groups. */
export class GroupIdsDto {
  @ids()
  groups: string[];
}

export const BODY_DTOS: Record<'users' | 'roles' | 'groups', Type<object>> = {
  users: UserIdsDto,
  roles: RoleIdsDto,
  groups: GroupIdsDto,
};

/** An OpenAPI schema class: `id`, then uuid fields, then audit fields (link and permission records). */
export function linkDoc(name: string, uuidFields: string[]): Type<unknown> {
  const Doc = class extends AuditDoc {};
  Object.defineProperty(Doc, 'name', { value: name });
  for (const f of ['id', ...uuidFields]) ApiProperty({ type: String, format: 'uuid' })(Doc.prototype, f);
  return Doc;
}

/** An effective permission of a user, one per source. */
export class EffectivePermissionDoc {
  @ApiProperty({ format: 'uuid' }) resource_id: string;
  @ApiProperty({ format: 'uuid' }) scope_id: string;
  @ApiProperty({ example: 'orders:read' }) scope_name: string;
  @ApiProperty({ type: String, nullable: true, example: 'https://api.example.com/orders' }) identifier_url:
    string | null;
  @ApiProperty({
    enum: ['direct', 'role', 'group'],
    description:
      'direct: granted to the user; role: through role_id given to the user; group: through role_id of group_id, a group the user is in or an ancestor of one',
  })
  source: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) role_id: string | null;
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) group_id: string | null;
}
