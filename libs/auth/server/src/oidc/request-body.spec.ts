import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { BodyError, parseParams, readBody, replayAsForm } from './request-body.js';

const req = (contentType?: string, body = '') => {
  const r = new IncomingMessage(new Socket());
  r.method = 'POST';
  r.url = '/token?x=1';
  r.headers = contentType
    ? { 'content-type': contentType, 'content-length': String(Buffer.byteLength(body)) }
    : {};
  r.push(body);
  r.push(null);
  return r;
};

describe('request bodies of the OAuth endpoints', () => {
  it('parses form and JSON bodies to the same parameters', () => {
    const form = parseParams(req('application/x-www-form-urlencoded'), Buffer.from('a=1&b=x%20y&r=u1&r=u2'));
    const json = parseParams(
      req('application/json; charset=utf-8'),
      Buffer.from('{"a":1,"b":"x y","r":["u1","u2"]}'),
    );
    expect(form).toEqual({ a: '1', b: 'x y', r: ['u1', 'u2'] });
    expect(json).toEqual(form);
  });

  it('rejects malformed JSON, non-object JSON, nested values and unknown content types', () => {
    const bad = (type: string, body: string) => {
      try {
        parseParams(req(type), Buffer.from(body));
      } catch (e) {
        return [(e as BodyError).status, (e as BodyError).error];
      }
      return 'parsed';
    };
    expect(bad('application/json', '{"a":')).toEqual([400, 'invalid_request']);
    expect(bad('application/json', '[1,2]')).toEqual([400, 'invalid_request']);
    expect(bad('application/json', '{"a":{"b":1}}')).toEqual([400, 'invalid_request']);
    expect(bad('text/plain', 'a=1')).toEqual([415, 'invalid_request']);
    expect(parseParams(req('application/json'), Buffer.from('{"a":null}'))).toEqual({});
    // Found by tools/reliability/fuzz.mjs: a lone surrogate (valid JSON) made the form replay throw, a 500.
    expect(bad('application/json', '{"token":"x","\\ud800":false}')).toEqual([400, 'invalid_request']);
    expect(bad('application/json', '{"token":"\\udc00x"}')).toEqual([400, 'invalid_request']);
    expect(bad('application/json', '{"r":["ok","\\ud83d"]}')).toEqual([400, 'invalid_request']);
    expect(parseParams(req('application/json'), Buffer.from('{"t":"\\ud83d\\ude00"}'))).toEqual({ t: '😀' });
    expect(replayAsForm(req('application/json'), { t: '😀' })).toBeDefined();
  });

  it('refuses bodies over the limit', async () => {
    await expect(readBody(req('application/json', 'x'.repeat(100)), 10)).rejects.toMatchObject({
      status: 413,
    });
  });

  it('replays parameters as a complete form request with the original method, URL and headers', async () => {
    const original = req('application/json', '{}');
    original.headers.authorization = 'Basic abc';
    const copy = replayAsForm(original, { grant_type: 'client_credentials', resource: ['a', 'b'] });
    expect(copy.method).toBe('POST');
    expect(copy.url).toBe('/token?x=1');
    expect(copy.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(copy.headers.authorization).toBe('Basic abc');
    const body = (await readBody(copy)).toString();
    expect(body).toBe('grant_type=client_credentials&resource=a&resource=b');
    expect(copy.headers['content-length']).toBe(String(body.length));
    expect(copy.complete).toBe(true);
  });
});
