import { linkSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { scratchDir, swcBuild } from '@gatehouse/testing';

const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FEATURES = [
  'common',
  'clients',
  'client-access',
  'resources',
  'scopes',
  'users',
  'roles',
  'groups',
  'memberships',
];

/** The modules that build values from other features' modules while loading, e.g. `clients/client.record.ts`. */
const files = FEATURES.flatMap((dir) =>
  readdirSync(path.join(src, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(record|sql|queries|presenter|module)\.ts$|named-records\.ts$|link-kinds\.ts$/.test(f))
    .map((f) => `${dir}/${f}`),
);

// The sources compiled once, as the `build` target compiles them (swc, .swcrc), into a directory of this repository
// (so that bare imports resolve to its node_modules), then copied once per module under test.
const out = scratchDir('module-load');
const copy = (i: number) => path.join(out, `g${i}`);

// One worker thread imports each module from its own copy of the sources: every copy is a module graph of our code
// that nothing has loaded yet, so the module under test is the first of it to load, as an entry point would be. The
// packages (Nest, TypeORM, ...) never import our code, so they take no part in its import order: the worker loads
// them once and every copy shares them. (A fresh Jest module registry per module re-evaluated every package too,
// through the vm linker: about 5 s per module, against a fraction of a second here.)
const LOADER = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ url }) =>
  import(url).then(
    () => parentPort.postMessage({ ok: true }),
    (err) => parentPort.postMessage({ ok: false, error: (err && err.stack) || String(err) }),
  ),
);
`;

let worker: Worker;

/** A copy of the tree `from` at `to` made of hard links: other paths, so other module URLs, without copying. */
function linkTree(from: string, to: string) {
  for (const rel of readdirSync(from, { recursive: true, encoding: 'utf8' })) {
    const source = path.join(from, rel);
    const target = path.join(to, rel);
    if (statSync(source).isDirectory()) {
      mkdirSync(target, { recursive: true });
    } else {
      mkdirSync(path.dirname(target), { recursive: true });
      linkSync(source, target);
    }
  }
}

function loadAlone(file: string, i: number): Promise<void> {
  const url = pathToFileURL(path.join(copy(i), 'apps/identity/src', file.replace(/\.ts$/, '.js'))).href;
  return new Promise((resolve, reject) => {
    const onExit = (code: number) => reject(new Error(`the worker exited (${code}) while loading ${file}`));
    worker.once('exit', onExit);
    worker.once('message', (m: { ok: boolean; error?: string }) => {
      worker.off('exit', onExit);
      if (m.ok) resolve();
      else reject(new Error(`${file} does not load on its own:\n${m.error}`));
    });
    worker.postMessage({ url });
  });
}

beforeAll(() => {
  swcBuild(['apps/identity/src', 'libs'], copy(0));
  for (let i = 1; i < files.length; i++) linkTree(copy(0), copy(i));
  worker = new Worker(LOADER, { eval: true });
});

afterAll(async () => {
  await worker?.terminate();
  rmSync(out, { recursive: true, force: true });
});

/**
 * The features import each other's record helpers (a client embeds resources, a resource embeds clients). Each
 * module must load first on its own, whatever the import order: a value used while loading must come from a leaf.
 */
describe('management modules', () => {
  it.each(files.map((file, i) => [file, i] as const))('%s loads on its own', async (file, i) => {
    await loadAlone(file, i);
  });
});
