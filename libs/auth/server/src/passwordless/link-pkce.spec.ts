import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { LINK_PKCE_PARAM, LinkPkceWaiver, pkceWaived } from './link-pkce.js';

const key = Buffer.alloc(32, 1);
const older = Buffer.alloc(32, 2);

function authorize(query: Record<string, string>): IncomingMessage {
  const req = new IncomingMessage(new Socket());
  req.url = `/authorize?${new URLSearchParams(query).toString()}`;
  return req;
}

describe('LinkPkceWaiver', () => {
  const now = 1_800_000_000_000;
  const waiver = new LinkPkceWaiver([key, older], () => now);
  const params = { client_id: 'c1', redirect_uri: 'https://rp.test/cb', state: 's' };
  const checked = (query: Record<string, string>, w = waiver) => {
    const req = authorize(query);
    w.check(req);
    return pkceWaived(req);
  };

  it('waives PKCE for the request it was signed for, with any of its keys', () => {
    const signed = waiver.sign('c1', 'https://rp.test/cb', 's');
    expect(checked({ ...params, [LINK_PKCE_PARAM]: signed })).toBe(true);
    const byOlder = new LinkPkceWaiver([older], () => now).sign('c1', 'https://rp.test/cb', 's');
    expect(checked({ ...params, [LINK_PKCE_PARAM]: byOlder })).toBe(true);
    // no state: signed and checked as empty
    const stateless = waiver.sign('c1', 'https://rp.test/cb', undefined);
    expect(
      checked({ client_id: 'c1', redirect_uri: 'https://rp.test/cb', [LINK_PKCE_PARAM]: stateless }),
    ).toBe(true);
  });

  it('not for another client, redirect URI or state, once expired, or signed with another key', () => {
    const signed = waiver.sign('c1', 'https://rp.test/cb', 's');
    expect(checked({ ...params, client_id: 'c2', [LINK_PKCE_PARAM]: signed })).toBe(false);
    expect(checked({ ...params, redirect_uri: 'https://rp.test/x', [LINK_PKCE_PARAM]: signed })).toBe(false);
    expect(checked({ ...params, state: 't', [LINK_PKCE_PARAM]: signed })).toBe(false);
    const later = new LinkPkceWaiver([key], () => now + 121_000);
    expect(checked({ ...params, [LINK_PKCE_PARAM]: signed }, later)).toBe(false);
    const foreign = new LinkPkceWaiver([Buffer.alloc(32, 3)], () => now).sign(
      'c1',
      'https://rp.test/cb',
      's',
    );
    expect(checked({ ...params, [LINK_PKCE_PARAM]: foreign })).toBe(false);
    expect(checked({ ...params, [LINK_PKCE_PARAM]: 'garbage' })).toBe(false);
    expect(checked(params)).toBe(false);
  });
});
