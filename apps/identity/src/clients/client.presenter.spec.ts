import { clientInputV2 } from './client.presenter.js';
import { clientMetadataOf, shapeClient, type ClientRecord } from './client.record.js';
import { mergeMetadata } from './clients.service.js';

// a record as the service gives one (cast: a column added to the table needs no line here)
const record = {
  id: 'c1',
  instance_id: 'i1',
  tenant_id: null,
  client_type: 'spa',
  client_name: 'Web',
  client_secret: 's',
  client_secret_expires_at: null,
  client_description: null,
  client_metadata: { grant_types: ['client_credentials'], urls: { a: 1 }, mobile: { ios: { team_id: 't' } } },
  app_metadata: [],
  is_public: false,
  is_first_party: true,
  is_global: true,
  created_by: null,
  created_at: '1970-01-01T00:00:00.000Z',
  updated_by: null,
  updated_at: '1970-01-01T00:00:00.000Z',
  aggregations: {
    id: 'c1',
    client_id: 'c1',
    resources: 1,
    permissions: 2,
    created_by: null,
    created_at: '1970-01-01T00:00:00.000Z',
    updated_by: null,
    updated_at: '1970-01-01T00:00:00.000Z',
  },
} as Partial<ClientRecord> as ClientRecord;

describe('client presentations', () => {
  it('v1 shows document 1 fields and metadata keys', () => {
    const v1 = shapeClient('v1')(record, false);
    expect(v1).toMatchObject({ client_type: 'spa', is_public: false, is_global: true, tenant_id: null });
    expect(v1.client_metadata).toEqual({ grant_types: ['client_credentials'], urls: { a: 1 } });
    expect(v1.aggregations).toBeDefined();
    expect(v1.links).toEqual({
      resources: '/api/v1/clients/c1/resources',
      permissions: '/api/v1/clients/c1/permissions',
    });
  });

  it('v2 shows the client type as client_metadata.app_type, says aggregates, keeps the rest', () => {
    const v2 = shapeClient('v2')({ ...record, resources: [] }, true);
    for (const k of ['client_type', 'aggregations', 'links']) expect(v2).not.toHaveProperty(k);
    expect(v2).toMatchObject({ is_public: false, is_global: true, tenant_id: null, resources: [] });
    expect(v2.client_metadata).toEqual({
      app_type: 'spa',
      grant_types: ['client_credentials'],
      mobile: { ios: { team_id: 't' } },
    });
    expect(v2.aggregates).toMatchObject({ resources: 1, permissions: 2 });
  });

  it('a v2 body maps app_type to the client type; a null app_type clears it', () => {
    expect(
      clientInputV2({ client_name: 'x', client_metadata: { app_type: 'native', grant_types: [] } }),
    ).toEqual({
      client_name: 'x',
      client_type: 'native',
      client_metadata: { grant_types: [] },
    });
    expect(clientInputV2({ client_metadata: { app_type: null } })).toEqual({
      client_type: null,
      client_metadata: {},
    });
    expect(clientInputV2({ client_description: 'd' })).toEqual({
      client_description: 'd',
      client_metadata: undefined,
    });
    expect(clientMetadataOf('v2', {}, null)).toEqual({});
  });

  it('metadata patches replace given keys and remove null ones', () => {
    expect(mergeMetadata({ a: 1, b: { c: 2 }, d: 4 }, { b: { e: 3 }, d: null, f: [1] })).toEqual({
      a: 1,
      b: { e: 3 },
      f: [1],
    });
  });
});
