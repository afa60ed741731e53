import { RouteTable, UNMATCHED_ROUTE } from './route-table.js';
import { createHash } from 'node:crypto';
import { callerKey, endpointKey, tokenDigest } from './rate-limit.js';

describe('rate-limit keys', () => {
  it('identifies the caller by bearer token hash, Basic client id, else IP', () => {
    const bearer = callerKey({ headers: { authorization: 'Bearer abc.def' }, ip: '1.2.3.4' });
    expect(bearer).toMatch(/^bearer:/);
    expect(bearer).not.toContain('abc.def');
    expect(callerKey({ headers: { authorization: 'bearer abc.def' }, ip: '9.9.9.9' })).toBe(bearer);
    expect(callerKey({ headers: { authorization: 'Bearer other' }, ip: '1.2.3.4' })).not.toBe(bearer);
    const basic = (id: string, secret: string) =>
      `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
    const c1 = callerKey({ headers: { authorization: basic('client-1', 's1') }, ip: '1.2.3.4' });
    expect(c1).toMatch(/^client:/);
    expect(callerKey({ headers: { authorization: basic('client-1', 'other') }, ip: '5.6.7.8' })).toBe(c1);
    expect(callerKey({ headers: {}, ip: '1.2.3.4' })).toBe('ip:1.2.3.4');
    expect(callerKey({ headers: { authorization: 'Bearer' }, ip: '1.2.3.4' })).toBe('ip:1.2.3.4');
  });

  it("keys a bearer token by its SHA-256 digest, the one the token validator's cache uses", () => {
    const token = 'eyJ.payload.signature';
    const digest = createHash('sha256').update(token).digest('base64url');
    expect(tokenDigest(token)).toBe(digest);
    expect(tokenDigest(token)).toBe(digest); // memoised: the same answer
    expect(callerKey({ headers: { authorization: `Bearer ${token}` }, ip: '1.2.3.4' })).toBe(
      `bearer:${digest.slice(0, 32)}`,
    );
  });

  it('keys by method and route pattern, unknown routes together', () => {
    const t = new RouteTable();
    t.add('GET', '/clients/:client_id');
    expect(endpointKey(t, 'get', '/clients/1')).toBe('GET /clients/:client_id');
    expect(endpointKey(t, 'GET', '/clients/2')).toBe('GET /clients/:client_id');
    expect(endpointKey(t, 'POST', '/clients/2')).toBe('POST /clients/:client_id');
    expect(endpointKey(t, 'GET', '/x')).toBe(UNMATCHED_ROUTE);
    expect(endpointKey(t, 'GET', '/y')).toBe(UNMATCHED_ROUTE);
  });
});
