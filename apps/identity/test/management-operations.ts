/** Every management operation of issue 5, as `METHOD path` under `/api/<version>`. */
export const OPERATIONS = [
  'GET /clients',
  'POST /clients',
  'GET /clients/:client_id',
  'PATCH /clients/:client_id',
  'DELETE /clients/:client_id',
  'POST /clients/:client_id/rotate-secret',
  'GET /clients/:client_id/resources',
  'POST /clients/:client_id/resources',
  'DELETE /clients/:client_id/resources',
  'GET /clients/:client_id/permissions',
  'POST /clients/:client_id/permissions',
  'DELETE /clients/:client_id/permissions',
  'GET /resources',
  'POST /resources',
  'GET /resources/:resource_id',
  'PATCH /resources/:resource_id',
  'DELETE /resources/:resource_id',
  'GET /resources/:resource_id/scopes',
  'POST /resources/:resource_id/scopes',
  'GET /resources/:resource_id/scopes/:scope_id',
  'PATCH /resources/:resource_id/scopes/:scope_id',
  'DELETE /resources/:resource_id/scopes/:scope_id',
  'GET /resources/:resource_id/clients',
  'POST /resources/:resource_id/clients',
  'DELETE /resources/:resource_id/clients',
  'GET /users',
  'POST /users',
  'GET /users/:user_id',
  'PATCH /users/:user_id',
  'DELETE /users/:user_id',
  'PUT /users/:user_id/password',
  'POST /users/:user_id/block',
  'POST /users/:user_id/unblock',
];

/** The scope an operation needs (docs/contract.md: `<group>:read` for GET, `<group>:write` otherwise). */
export function scopeOf(op: string): string {
  const [method, template] = op.split(' ');
  const group = template.startsWith('/users')
    ? 'users'
    : template.startsWith('/resources')
      ? 'resources'
      : 'clients';
  return `${group}:${method === 'GET' ? 'read' : 'write'}`;
}

/** The path of an operation under a version, with every id parameter set to `id`. */
export const pathOf = (v: string, op: string, id: string) =>
  `/api/${v}${op.split(' ')[1].replace(/:[a-z_]+/g, id)}`;
