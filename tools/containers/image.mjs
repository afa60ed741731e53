#!/usr/bin/env node
// The image of docker/Dockerfile, built once per content and reused: by the image test (tools/checks), the replica
// test (tools/replicas) and whoever runs `node tools/containers/image.mjs` (prints the tag). The tag is derived from
// what the build reads (the Dockerfile, the files it copies minus .dockerignore's, the base image and the extra CA),
// so a tag that exists is the image of these sources and the build is skipped; a changed file gives a new tag.
// Builds wait for each other on a lock file (flock), so two tests starting together build once: the second finds
// the tag the first made. Needs the engine tools/containers/engine.sh provides (DOCKER_HOST, GATEHOUSE_BASE_IMAGE,
// GATEHOUSE_RUNTIME_BASE, GATEHOUSE_EXTRA_CA). GATEHOUSE_IMAGE names an image to use as it is (no hashing, no build).
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const REPOSITORY = 'gatehouse';
const TAG_PREFIX = 'ctx-';
// Content tags kept besides the one just built: other worktrees and runs may still use an older one.
const KEEP = 3;
const LOCK = path.join(os.tmpdir(), 'gatehouse-image-build.lock');
// What docker/Dockerfile copies from the context (COPY lines), and the Dockerfile itself.
const INPUTS = [
  'docker/Dockerfile',
  'package.json',
  'package-lock.json',
  'docker/ca',
  'nx.json',
  'tsconfig.base.json',
  '.swcrc',
  'jest.preset.mjs',
  'apps',
  'libs',
  'tools',
];
// The CA bundle is copied into the context for the build and removed after; its content is hashed on its own.
const CA_IN_CONTEXT = 'docker/ca/.ci-extra-ca.pem';
const execFileAsync = promisify(execFile);
const BUILD_ENV = { ...process.env, DOCKER_BUILDKIT: '0' };

/** Whether a Docker engine answers `docker info` (DOCKER_HOST or the default socket). */
export function engineAnswers() {
  const r = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  return r.status === 0 && r.stdout.trim() !== '';
}

/** .dockerignore's patterns as tests on a path relative to the context (the forms that file uses). */
function ignored() {
  const patterns = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  return (/** @type {string} */ rel) =>
    patterns.some((p) => {
      if (p.startsWith('**/*')) return rel.endsWith(p.slice(4));
      return rel === p || rel.startsWith(`${p}/`);
    });
}

/** The content tag: a hash of every input file (path and bytes), the base image's id and the extra CA. */
export function contentTag() {
  const hash = createHash('sha256');
  const skip = ignored();
  const add = (/** @type {string} */ rel) => {
    if (skip(rel) || rel === CA_IN_CONTEXT) return;
    const abs = path.join(ROOT, rel);
    const st = statSync(abs, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) {
      // node_modules: .dockerignore names the root one; none below is part of the sources either.
      for (const e of readdirSync(abs).sort()) if (e !== 'node_modules') add(path.posix.join(rel, e));
    } else if (st.isFile()) {
      hash.update(`${rel}\0${st.mode & 0o111 ? 'x' : '-'}\0`);
      hash.update(readFileSync(abs));
      hash.update('\0');
    }
  };
  for (const i of INPUTS) add(i);
  const base = process.env.GATEHOUSE_BASE_IMAGE;
  hash.update(`base\0${base ? imageId(base) || base : 'node:22-slim'}\0`);
  const runtime = process.env.GATEHOUSE_RUNTIME_BASE;
  hash.update(`runtime\0${runtime ? imageId(runtime) || runtime : 'debian:bookworm-slim'}\0`);
  if (process.env.GATEHOUSE_EXTRA_CA) hash.update(readFileSync(process.env.GATEHOUSE_EXTRA_CA));
  return `${REPOSITORY}:${TAG_PREFIX}${hash.digest('hex').slice(0, 16)}`;
}

function imageId(/** @type {string} */ ref) {
  const r = spawnSync('docker', ['image', 'inspect', '-f', '{{.Id}}', ref], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : '';
}

/**
 * `docker build` of the image under `tag` unless it exists. Call with the lock held.
 * @param {string} tag
 * @returns {{ tag: string; built: boolean; seconds: number }}
 */
function buildLocked(tag) {
  if (imageId(tag)) return { tag, built: false, seconds: 0 };
  const args = ['build', '--network', 'host', '-f', 'docker/Dockerfile', '-t', tag];
  const base = process.env.GATEHOUSE_BASE_IMAGE;
  if (base) args.push('--build-arg', `BASE_IMAGE=${base}`);
  const runtime = process.env.GATEHOUSE_RUNTIME_BASE;
  if (runtime) args.push('--build-arg', `RUNTIME_BASE=${runtime}`);
  if (process.env.GATEHOUSE_EXTRA_CA) {
    copyFileSync(process.env.GATEHOUSE_EXTRA_CA, path.join(ROOT, CA_IN_CONTEXT));
    args.push('--build-arg', `EXTRA_CA_CERTS=${CA_IN_CONTEXT}`);
  }
  const t0 = Date.now();
  try {
    // The classic builder: BuildKit may be absent (Debian's docker.io) and needs no registry this way.
    execFileSync('docker', [...args, '.'], {
      cwd: ROOT,
      env: BUILD_ENV,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 25 * 60_000,
      maxBuffer: 256 * 1024 * 1024,
    });
  } catch (err) {
    const e = /** @type {{ stdout?: Buffer; stderr?: Buffer; message: string }} */ (err);
    const out = `${e.stdout?.toString() ?? ''}${e.stderr?.toString() ?? ''}`;
    throw new Error(`docker build of ${tag} failed: ${e.message}\n${out.slice(-4000)}`);
  } finally {
    rmSync(path.join(ROOT, CA_IN_CONTEXT), { force: true });
  }
  pruneOld(tag);
  return { tag, built: true, seconds: (Date.now() - t0) / 1000 };
}

/** Removes the content tags older than the KEEP newest besides `tag`; one still in use stays (no --force). */
function pruneOld(/** @type {string} */ tag) {
  const r = spawnSync('docker', ['image', 'ls', REPOSITORY, '--format', '{{.Tag}}\t{{.CreatedAt}}'], {
    encoding: 'utf8',
  });
  if (r.status !== 0) return;
  const old = r.stdout
    .split('\n')
    .map((l) => l.split('\t'))
    .filter(([t]) => t?.startsWith(TAG_PREFIX) && `${REPOSITORY}:${t}` !== tag)
    .sort((a, b) => b[1].localeCompare(a[1]))
    .slice(KEEP);
  for (const [t] of old) spawnSync('docker', ['rmi', `${REPOSITORY}:${t}`], { stdio: 'ignore' });
}

/**
 * The image for these sources: GATEHOUSE_IMAGE if set, else the content tag, built under the lock when missing.
 * Throws when the build fails.
 * @param {{ log?: (s: string) => void }} [o]
 * @returns {Promise<{ tag: string; built: boolean; seconds: number; bytes: number }>}
 */
export async function ensureImage(o = {}) {
  const log = o.log ?? (() => undefined);
  const given = process.env.GATEHOUSE_IMAGE;
  const tag = given || contentTag();
  let result = { tag, built: false, seconds: 0 };
  if (!imageId(tag)) {
    if (given) throw new Error(`GATEHOUSE_IMAGE=${given}: no such image in the engine`);
    log(
      `building ${tag} (docker/Dockerfile: build on ${process.env.GATEHOUSE_BASE_IMAGE ?? 'node:22-slim'}, runtime on ${process.env.GATEHOUSE_RUNTIME_BASE ?? 'debian:bookworm-slim'})`,
    );
    const self = fileURLToPath(import.meta.url);
    const { stdout } = await execFileAsync(
      'flock',
      ['-w', String(30 * 60), LOCK, process.execPath, self, '--build-locked', tag],
      { cwd: ROOT, env: process.env, maxBuffer: 16 * 1024 * 1024, timeout: 31 * 60_000 },
    ).catch((err) => {
      throw new Error(`${err.message}${err.stderr ? `\n${String(err.stderr).slice(-4000)}` : ''}`);
    });
    result = JSON.parse(stdout.trim().split('\n').pop() ?? '{}');
  }
  const bytes = Number(
    execFileSync('docker', ['image', 'inspect', '-f', '{{.Size}}', tag], { encoding: 'utf8' }),
  );
  return { ...result, bytes };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--build-locked');
  try {
    if (i > 0) {
      process.stdout.write(`${JSON.stringify(buildLocked(process.argv[i + 1]))}\n`);
    } else {
      // `node tools/containers/image.mjs [--json]`: the tag (built if missing), or everything as JSON.
      const r = await ensureImage({ log: (s) => process.stderr.write(`image: ${s}\n`) });
      process.stdout.write(process.argv.includes('--json') ? `${JSON.stringify(r)}\n` : `${r.tag}\n`);
    }
  } catch (err) {
    process.stderr.write(`image: ${err instanceof Error ? err.message : err}\n`);
    process.exit(1);
  }
}
