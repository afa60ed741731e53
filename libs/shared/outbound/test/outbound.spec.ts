import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Allowlist,
  classifyAddress,
  OutboundError,
  OutboundFetcher,
  OutboundPolicy,
  OutboundRefused,
  outboundEnv,
  type Resolver,
} from '../src/index.js';
import { loadEnv } from '@gatehouse/config';
import { eventually } from '@gatehouse/testing';

describe('classifyAddress', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.254', 'cgnat'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.170', 'protocol'],
    ['192.0.2.10', 'documentation'],
    ['192.88.99.1', 'reserved'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['224.0.0.251', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::127.0.0.1', 'loopback'], // IPv4-compatible
    ['64:ff9b::a9fe:a9fe', 'link-local'], // NAT64 of 169.254.169.254
    ['64:ff9b:1::1', 'private'],
    ['2002:7f00:1::1', 'loopback'], // 6to4 of 127.0.0.1
    ['2002:c0a8:101::', 'private'], // 6to4 of 192.168.1.1
    ['100::1', 'reserved'],
    ['2001::1', 'protocol'], // Teredo
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456:789a::1', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['not-an-ip', 'invalid'],
    ['1.2.3', 'invalid'],
  ])('%s is %s', (ip, kind) => {
    expect(classifyAddress(ip)).toBe(kind);
  });

  it.each([
    '1.1.1.1',
    '8.8.8.8',
    '9.255.255.255',
    '11.0.0.1',
    '100.63.255.255',
    '100.128.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.167.1.1',
    '193.0.0.1',
    '223.255.255.254',
    '2606:4700:4700::1111',
    '2a00:1450:4001::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('%s is public', (ip) => {
    expect(classifyAddress(ip)).toBeNull();
  });
});

describe('Allowlist', () => {
  it('parses origins, host names, wildcards, addresses and CIDRs; refuses anything else', () => {
    const a = new Allowlist(' http://127.0.0.1:8080, idp.dev.test *.corp.test,10.0.0.0/8 ::1 ');
    expect(a.namesUrl(new URL('http://127.0.0.1:8080/x'))).toBe(true);
    expect(a.namesUrl(new URL('http://127.0.0.1:8081/x'))).toBe(false);
    expect(a.namesUrl(new URL('https://127.0.0.1:8080/x'))).toBe(false);
    expect(a.namesUrl(new URL('http://IDP.dev.test/x'))).toBe(true);
    expect(a.namesUrl(new URL('http://evil-idp.dev.test/x'))).toBe(false);
    expect(a.namesUrl(new URL('http://a.b.corp.test/x'))).toBe(true);
    expect(a.namesUrl(new URL('http://corp.test/x'))).toBe(false);
    expect(a.namesUrl(new URL('http://10.2.3.4/x'))).toBe(true);
    expect(a.namesUrl(new URL('http://[::1]:9/x'))).toBe(true);
    expect(a.admitsAddress('10.9.9.9')).toBe(true);
    expect(a.admitsAddress('11.0.0.1')).toBe(false);
    for (const bad of [
      'http://x.test/path',
      'ftp://x.test',
      '10.0.0.0/33',
      'a b/c',
      'x_.test/',
      'http://u:p@x.test',
    ]) {
      expect(() => new Allowlist(bad)).toThrow();
    }
    expect(new Allowlist('').empty).toBe(true);
  });

  it('is validated at boot as OUTBOUND_ALLOWLIST, naming the variable', () => {
    expect(loadEnv(outboundEnv, { OUTBOUND_ALLOWLIST: '127.0.0.1, idp.dev.test' }).OUTBOUND_ALLOWLIST).toBe(
      '127.0.0.1, idp.dev.test',
    );
    expect(() => loadEnv(outboundEnv, { OUTBOUND_ALLOWLIST: '10.0.0.0/99' })).toThrow(/OUTBOUND_ALLOWLIST/);
  });
});

describe('OutboundPolicy', () => {
  const fixed =
    (map: Record<string, string[]>, calls: string[] = []): Resolver =>
    async (host) => {
      calls.push(host);
      const list = map[host];
      if (!list) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };

  it('check: https only, no credentials or fragment, no literal internal address or localhost (no DNS)', () => {
    const p = new OutboundPolicy({ resolver: fixed({}) });
    expect(p.check('https://idp.example.com/.well-known/openid-configuration').host).toBe('idp.example.com');
    for (const raw of [
      'http://idp.example.com',
      'ftp://idp.example.com',
      'https://u:p@idp.example.com',
      'https://idp.example.com/#x',
      'https://127.0.0.1',
      'https://2130706433', // 127.0.0.1
      'https://0x7f.1', // 127.0.0.1
      'https://[::ffff:127.0.0.1]',
      'https://[::1]',
      'https://169.254.169.254',
      'https://localhost',
      'https://localhost.',
      'https://a.localhost',
      `https://x.test/${'a'.repeat(2000)}`,
      'not a url',
    ]) {
      expect(() => p.check(raw)).toThrow(OutboundRefused);
    }
  });

  it('resolve: every address a name resolves to is checked; one DNS question per resolve', async () => {
    const calls: string[] = [];
    const p = new OutboundPolicy({
      resolver: fixed(
        {
          'public.example.com': ['93.184.216.34'],
          'rebind.example.com': ['127.0.0.1'],
          'mixed.example.com': ['93.184.216.34', '10.0.0.1'],
          'mapped.example.com': ['::ffff:169.254.169.254'],
          'v6.example.com': ['2606:4700::1'],
        },
        calls,
      ),
    });
    expect((await p.resolve('https://public.example.com/jwks')).address).toEqual({
      address: '93.184.216.34',
      family: 4,
    });
    expect((await p.resolve('https://v6.example.com/jwks')).address.family).toBe(6);
    for (const host of ['rebind', 'mixed', 'mapped', 'nowhere']) {
      await expect(p.resolve(`https://${host}.example.com/jwks`)).rejects.toBeInstanceOf(OutboundRefused);
    }
    expect(calls).toEqual([
      'public.example.com',
      'v6.example.com',
      'rebind.example.com',
      'mixed.example.com',
      'mapped.example.com',
      'nowhere.example.com',
    ]);
  });

  it('the allow-list admits http and private addresses for what it names; a CIDR admits its addresses', async () => {
    const p = new OutboundPolicy({
      allowlist: 'idp.dev.test, 10.1.0.0/16',
      resolver: fixed({
        'idp.dev.test': ['127.0.0.1'],
        'keys.corp.test': ['10.1.2.3'],
        'x.corp.test': ['10.2.0.1'],
      }),
    });
    expect((await p.resolve('http://idp.dev.test:8080/x')).address.address).toBe('127.0.0.1');
    expect((await p.resolve('https://keys.corp.test/x')).address.address).toBe('10.1.2.3');
    expect((await p.resolve('http://10.1.9.9/x')).address.address).toBe('10.1.9.9');
    await expect(p.resolve('http://keys.corp.test/x')).rejects.toThrow(/https/); // http needs the name listed
    await expect(p.resolve('https://x.corp.test/x')).rejects.toThrow(/private/);
  });
});

describe('OutboundFetcher', () => {
  let server: Server;
  let port: number;
  let handler: (req: IncomingMessage, res: ServerResponse) => void;
  const seen: { host?: string; url?: string }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ host: req.headers.host, url: req.url });
      handler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    seen.length = 0;
  });

  /** `idp.rebind.test` resolves (through the injected resolver only) to this machine, which the list admits. */
  const fetcherFor = (allowlist: string, limits = {}, calls: string[] = []) =>
    new OutboundFetcher({
      policy: new OutboundPolicy({
        allowlist,
        resolver: async (host) => {
          calls.push(host);
          return [{ address: '127.0.0.1', family: 4 }];
        },
      }),
      limits,
    });

  it('connects to the address it checked, with the name as Host (pinning)', async () => {
    handler = (_req, res) => res.end('{"ok":true}');
    const calls: string[] = [];
    const f = fetcherFor('idp.rebind.test', {}, calls);
    // The name exists in no DNS: the request can only have reached this server through the checked address.
    expect(await f.getJson(`http://idp.rebind.test:${port}/doc`)).toEqual({ ok: true });
    expect(seen).toEqual([{ host: `idp.rebind.test:${port}`, url: '/doc' }]);
    expect(calls).toEqual(['idp.rebind.test']);

    // The same name without the list: it resolves to loopback, refused before any connection.
    const strict = fetcherFor('');
    await expect(strict.get(`https://idp.rebind.test:${port}/doc`)).rejects.toThrow(/loopback/);
    await expect(strict.get(`http://127.0.0.1:${port}/doc`)).rejects.toThrow(/https/);
    await expect(strict.get(`https://localhost:${port}/doc`)).rejects.toBeInstanceOf(OutboundError);
    expect(seen).toHaveLength(1);
  });

  it('refuses redirects, other statuses, bodies over the cap (declared or streamed), compressed bodies', async () => {
    const f = fetcherFor('127.0.0.1', { maxBytes: 1024 });
    const url = `http://127.0.0.1:${port}/x`;
    const cases: [(req: IncomingMessage, res: ServerResponse) => void, RegExp][] = [
      [(_q, r) => r.writeHead(302, { location: 'http://169.254.169.254/' }).end(), /302/],
      [(_q, r) => r.writeHead(500).end('{}'), /500/],
      [
        (_q, r) => r.writeHead(200, { 'content-length': '5000' }).end('x'.repeat(5000)),
        /content-length 5000/,
      ],
      [
        (_q, r) => {
          r.writeHead(200); // chunked, no length
          r.write('x'.repeat(800));
          r.end('x'.repeat(800));
        },
        /over 1024/,
      ],
      [(_q, r) => r.writeHead(200, { 'content-encoding': 'gzip' }).end('x'), /content-encoding/],
    ];
    for (const [h, message] of cases) {
      handler = h;
      await expect(f.get(url)).rejects.toThrow(message);
    }
    handler = (_q, r) => r.end('[1]');
    await expect(f.getJson(url)).rejects.toThrow(/not a JSON object/);
  });

  it('times out a slow connection or body', async () => {
    const f = fetcherFor('127.0.0.1', { timeoutMs: 300 });
    handler = (_q, r) => {
      r.writeHead(200);
      r.write('{');
    };
    const started = Date.now();
    await expect(f.get(`http://127.0.0.1:${port}/slow`)).rejects.toThrow(/timed out/);
    expect(Date.now() - started).toBeLessThan(2000);
    // a black-holed address: nothing answers the SYN (TEST-NET-1 allowed here on purpose)
    const g = new OutboundFetcher({
      policy: new OutboundPolicy({ allowlist: '192.0.2.0/24' }),
      limits: { timeoutMs: 5000, connectTimeoutMs: 200 },
    });
    const t0 = Date.now();
    await expect(g.get('http://192.0.2.1/')).rejects.toThrow(
      /timed out|ENETUNREACH|EHOSTUNREACH|ECONNREFUSED/,
    );
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('shares one fetch between concurrent callers of a URL; caps fetches per host and in total', async () => {
    let open = 0;
    let maxOpen = 0;
    const pending: ServerResponse[] = [];
    handler = (_q, r) => {
      open++;
      maxOpen = Math.max(maxOpen, open);
      pending.push(r);
      r.on('close', () => open--);
    };
    const f = fetcherFor('127.0.0.1', { maxPerHost: 2, maxConcurrent: 3, maxQueued: 2, timeoutMs: 3000 });
    const same = [0, 1, 2].map(() => f.get(`http://127.0.0.1:${port}/same`));
    const others = [0, 1, 2].map((i) => f.get(`http://127.0.0.1:${port}/other${i}`));
    // two run (per host), two wait: the queue is full and the next one fails at once
    const extra = f.get(`http://127.0.0.1:${port}/extra`);
    await expect(extra).rejects.toThrow(/too many/);
    // the two running ones arrived; the two waiting start only when one of them is answered
    await eventually(() => pending.length === 2, { what: 'the two running fetches at the server' });
    expect(maxOpen).toBe(2);
    // answer whatever arrives until every fetch has its answer
    let answered = false;
    const all = Promise.all([...same, ...others]).finally(() => (answered = true));
    await eventually(
      () => {
        pending.splice(0).forEach((r) => r.end('{}'));
        return answered;
      },
      { timeoutMs: 10_000, what: 'every fetch answered' },
    );
    await all;
    expect(seen.filter((s) => s.url === '/same')).toHaveLength(1);
    expect(maxOpen).toBe(2);
  });
});
