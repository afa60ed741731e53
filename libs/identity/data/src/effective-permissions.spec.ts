import { placeOfSystemAccess, type ScopeSource } from './effective-permissions.js';

const T1 = '11111111-1111-4111-8111-111111111111';
const T2 = '22222222-2222-4222-8222-222222222222';
const global = { isGlobal: true, tenantId: null };
const src = (scope_name: string, tenant_id: string | null = null): ScopeSource => ({ scope_name, tenant_id });

describe('placeOfSystemAccess: where a user token acts on a system resource', () => {
  it('a global user with instance-wide sources acts in the instance, where tenant roles do not count', () => {
    expect(
      placeOfSystemAccess([src('users:read'), src('users:write', T1)], { tenantId: null }, global, true),
    ).toEqual({ scopes: ['users:read'], tenantId: null });
  });

  it("a global user holding only one tenant's roles (a tenant admin) acts in that tenant", () => {
    expect(placeOfSystemAccess([src('users:read', T1)], { tenantId: null }, global, true)).toEqual({
      scopes: ['users:read'],
      tenantId: T1,
    });
  });

  it("a global user holding several tenants' roles and nothing instance-wide holds nothing through a global client", () => {
    expect(
      placeOfSystemAccess([src('users:read', T1), src('users:write', T2)], { tenantId: null }, global, true),
    ).toEqual({ scopes: [], tenantId: null });
    // through a client of one of them: that tenant's
    expect(
      placeOfSystemAccess(
        [src('users:read', T1), src('users:write', T2)],
        { tenantId: null },
        { isGlobal: false, tenantId: T2 },
        true,
      ),
    ).toEqual({ scopes: ['users:write'], tenantId: T2 });
  });

  it("a tenant's user always acts in its tenant, with direct permissions and global roles too", () => {
    expect(
      placeOfSystemAccess([src('users:read'), src('roles:read', T1)], { tenantId: T1 }, global, true),
    ).toEqual({ scopes: ['roles:read', 'users:read'], tenantId: T1 });
  });

  it('a tenant-bound client without a tenant gives nothing; the tree API counts instance-wide sources only', () => {
    expect(
      placeOfSystemAccess([src('users:read')], { tenantId: null }, { isGlobal: false, tenantId: null }, true),
    ).toEqual({ scopes: [], tenantId: null });
    expect(
      placeOfSystemAccess([src('trees:read'), src('trees:write', T1)], { tenantId: T1 }, global, false)
        .scopes,
    ).toEqual(['trees:read']);
  });
});
