import { Column, Entity, ForeignKey, Index, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { Audited } from './audit.js';
import { Instance } from './instance.entity.js';
import { ClientResource } from './client-resource.entity.js';
import { Scope } from './scope.entity.js';

/**
 * A scope of a resource granted to a client. Two composite foreign keys keep it consistent:
 * (client_id, resource_id) must be an authorization in client_resources (revoking it drops these rows), and
 * (resource_id, scope_id) must be a scope of that resource (deleting the scope drops these rows).
 */
@Entity({ name: 'client_permissions' })
@Unique('uq_client_permissions', ['clientId', 'scopeId'])
@Index('ix_client_permissions_client_resource', ['clientId', 'resourceId'])
@Index('ix_client_permissions_resource_scope', ['resourceId', 'scopeId'])
@ForeignKey(() => ClientResource, ['clientId', 'resourceId'], ['clientId', 'resourceId'], {
  name: 'fk_client_permissions_client_resource',
  onDelete: 'CASCADE',
})
@ForeignKey(() => Scope, ['resourceId', 'scopeId'], ['resourceId', 'id'], {
  name: 'fk_client_permissions_scope',
  onDelete: 'CASCADE',
})
export class ClientPermission extends Audited {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_client_permissions' })
  id: string;

  @Column('uuid', { name: 'instance_id' })
  @ForeignKey(() => Instance, { name: 'fk_client_permissions_instance' })
  instanceId: string;

  @Column('uuid', { name: 'client_id' })
  clientId: string;

  @Column('uuid', { name: 'resource_id' })
  resourceId: string;

  @Column('uuid', { name: 'scope_id' })
  scopeId: string;
}
