// The console's static server (server/main.mjs) on a built-looking directory: caching, CSP, /config.json, the
// single-page fallback, and what it refuses.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
/* eslint-disable @nx/enforce-module-boundaries -- the seeded client's id must be the one the server names */
import { CONSOLE_CLIENT_ID } from '@gatehouse/identity-data';
/* eslint-enable @nx/enforce-module-boundaries */
import { consoleSettings, DEFAULT_CONSOLE_CLIENT_ID, startConsoleServer } from '../server/main.mjs';

/** A raw GET (the path sent as written: fetch would normalise `..`). */
function get(port: number, p: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>(
    (resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: p, headers }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        })
        .on('error', reject);
    },
  );
}

describe('console static server', () => {
  let dir: string;
  let server: http.Server;
  let port: number;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gh-console-'));
    mkdirSync(path.join(dir, 'assets'));
    writeFileSync(
      path.join(dir, 'index.html'),
      '<!doctype html><script type="module" src="/assets/a-1.js"></script>',
    );
    writeFileSync(path.join(dir, 'assets', 'a-1.js'), 'console.log(1)');
    writeFileSync(path.join(dir, 'favicon.svg'), '<svg/>');
    writeFileSync(path.join(os.tmpdir(), 'gh-console-secret.txt'), 'secret');
    const settings = consoleSettings({
      CONSOLE_PORT: '0',
      CONSOLE_STATIC_DIR: dir,
      ISSUER: 'https://login.example.test/',
      CONSOLE_IDENTITY_URL: 'https://api.example.test',
      CONSOLE_TREE_URL: 'https://tree.example.test',
    });
    server = await startConsoleServer({ ...settings, host: '127.0.0.1' });
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('names the client the token server seeds', () => {
    expect(DEFAULT_CONSOLE_CLIENT_ID).toBe(CONSOLE_CLIENT_ID);
  });

  it('serves the runtime configuration, never cached without revalidation', async () => {
    const r = await get(port, '/config.json');
    expect(r.status).toBe(200);
    expect(r.headers['cache-control']).toBe('no-cache');
    expect(JSON.parse(r.body)).toEqual({
      authUrl: 'https://login.example.test',
      identityUrl: 'https://api.example.test',
      treeUrl: 'https://tree.example.test',
      clientId: CONSOLE_CLIENT_ID,
    });
  });

  it('serves index.html with a strict CSP and no-cache, for every page of the app', async () => {
    for (const p of ['/', '/users/3f1c', '/callback?code=x']) {
      const r = await get(port, p);
      expect(r.status).toBe(200);
      expect(r.body).toContain('<script type="module"');
      expect(r.headers['cache-control']).toBe('no-cache');
      const csp = String(r.headers['content-security-policy']);
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain(
        "connect-src 'self' https://login.example.test https://api.example.test https://tree.example.test",
      );
    }
  });

  it('serves hashed assets immutable for a year, with a validator', async () => {
    const r = await get(port, '/assets/a-1.js');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/javascript/);
    expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await get(port, '/assets/a-1.js', { 'if-none-match': String(r.headers.etag) })).status).toBe(304);
    expect((await get(port, '/favicon.svg')).headers['cache-control']).toBe('no-cache');
  });

  it('answers 404 for a missing asset (never index.html as a script) and stays inside its directory', async () => {
    expect((await get(port, '/assets/old-hash.js')).status).toBe(404);
    expect((await get(port, '/missing.png')).status).toBe(404);
    const out = await get(port, '/../gh-console-secret.txt');
    expect(out.body).not.toContain('secret');
    expect((await get(port, '/%2e%2e/gh-console-secret.txt')).body).not.toContain('secret');
  });

  it('serves GET and HEAD only', async () => {
    const status = await new Promise<number>((resolve) => {
      const req = http.request({ host: '127.0.0.1', port, path: '/', method: 'POST' }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.end();
    });
    expect(status).toBe(405);
  });

  it('refuses a service URL that is not http(s)', () => {
    expect(() => consoleSettings({ CONSOLE_IDENTITY_URL: 'javascript:alert(1)' })).toThrow(
      /CONSOLE_IDENTITY_URL/,
    );
  });
});
