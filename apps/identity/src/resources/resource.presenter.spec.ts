import { resourceInputV2, resourceMetadataFromV2 } from './resource.presenter.js';
import { resourceMetadataV2, type ResourceMetadata } from './resource.record.js';

const md: ResourceMetadata = {
  is_system: false,
  identifier_url: 'https://api.test',
  signing_algorithm: 'HS256',
  signing_secret: 'k'.repeat(32),
  token_lifetime: 600,
  rbac_enabled: false,
  scopes_added: true,
  skip_consent_for_first_party: true,
};

describe('resource presentations', () => {
  it("document 2's resource_metadata nests api and token settings", () => {
    expect(resourceMetadataV2(md)).toEqual({
      api: { identifier_url: 'https://api.test', expiration_lifetime: 600, is_system: false },
      token: { expiration_lifetime: 600, signing_algorithm: 'HS256', signing_secret: 'k'.repeat(32) },
      skip_consent_for_first_party: true,
    });
    const { signing_secret: _s, ...listed } = md;
    expect(resourceMetadataV2(listed).token).not.toHaveProperty('signing_secret');
  });

  it('a v2 body maps back to canonical names; either lifetime sets the token lifetime', () => {
    expect(
      resourceInputV2({
        resource_name: 'n',
        resource_metadata: {
          api: { identifier_url: 'urn:x', expiration_lifetime: 60 },
          token: { signing_algorithm: 'ES256' },
        },
      }),
    ).toEqual({
      resource_name: 'n',
      resource_metadata: { identifier_url: 'urn:x', token_lifetime: 60, signing_algorithm: 'ES256' },
    });
    expect(resourceMetadataFromV2({ token: { expiration_lifetime: 90 } })).toEqual({ token_lifetime: 90 });
    expect(
      resourceMetadataFromV2({ api: { expiration_lifetime: 90 }, token: { expiration_lifetime: 90 } }),
    ).toEqual({
      token_lifetime: 90,
    });
  });

  it('two different lifetimes are a 400', () => {
    expect(() =>
      resourceMetadataFromV2({ api: { expiration_lifetime: 60 }, token: { expiration_lifetime: 61 } }),
    ).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });
});
