import { iso, type Timestamp } from '@gatehouse/db';

/**
 * The `scopes` table (alias `s`): the scopes of a resource. Rows are reached through their resource, which is found
 * in the caller's scope first (findResource); a scope carries its resource's instance.
 */
export interface ScopeRow {
  id: string;
  instance_id: string;
  resource_id: string;
  scope_name: string;
  scope_description: string | null;
  created_by: string | null;
  created_at: Timestamp;
  updated_by: string | null;
  updated_at: Timestamp;
}

export const SCOPE_COLUMNS = `s.id, s.instance_id, s.resource_id, s.scope_name, s.scope_description, s.created_by,
  ${iso('s.created_at')} AS created_at, s.updated_by, ${iso('s.updated_at')} AS updated_at`;
