#!/usr/bin/env node
/// <reference lib="dom" />
// The console's node tree on a 1,111,111-node version (fan-out 10, depth 6, tools/bench/tree/seed.mjs): how long
// until a level is on screen, in Debian's Chromium, through the built console and the real services.
//
//   npx nx run-many -t build -p auth,identity,tree,console && node tools/bench/console/tree-view.mjs
//
// Started as `npm start` starts them (tools/launcher/start.mjs) on two throw-away databases of BENCH_PG_URL
// (else TEST_PG_URL, else postgres://postgres@127.0.0.1:5432/postgres). Measured, each in the page itself from the
// click to the DOM change (a MutationObserver) and to the next animation frame after it:
//   - expand: a node's twisty clicked at depth d (0-5), until its first child row is in the tree (one level fetched:
//     GET .../nodes?q=parent_id = '...', 100 a page); BENCH_REPEAT different nodes a depth, each fetched for the
//     first time;
//   - open: a node of depth d (1-6) chosen in the search results of a freshly loaded page, until its row is shown
//     selected (its ancestors by parent links, their levels asked for as the walk goes);
//   - link: the console's own link to a node of depth d (?node=<id>&path=<ancestor ids>) followed inside the app on
//     a freshly loaded page: the ancestors' levels at once.
// Variables: BENCH_FANOUT (10), BENCH_DEPTH (6), BENCH_REPEAT (5), BENCH_DOCS (docs/benchmarks.md; empty: not
// written), CHROMIUM_PATH (/usr/bin/chromium), BENCH_KEEP=1 (keep the databases).
// Prints a table and writes it into the "Console: the tree view" section of docs/benchmarks.md.
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { chromium } from 'playwright-core';
import { adminPgUrl, benchRoot, benchServiceEnv, builtFiles, clientCredentialsToken } from '../lib/setup.mjs';
import { median, percentile } from '../lib/stats.mjs';
import { firstLabel, seedGeneratedVersion, totalNodes } from '../tree/seed.mjs';

const env = process.env;
const FANOUT = Number(env.BENCH_FANOUT || 10);
const DEPTH = Number(env.BENCH_DEPTH || 6);
const REPEAT = Number(env.BENCH_REPEAT || 5);
const DOCS = env.BENCH_DOCS ?? path.join(benchRoot, 'docs/benchmarks.md');
const CHROMIUM = env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const TOTAL = totalNodes(FANOUT, DEPTH);
const log = (...a) => console.error('[bench]', ...a);

builtFiles(['auth', 'identity', 'tree', 'console']);
if (!existsSync(CHROMIUM)) {
  console.error(`Chromium not found at ${CHROMIUM} (CHROMIUM_PATH)`);
  process.exit(1);
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (s.address());
      s.close(() => resolve(port));
    });
  });
const withDb = (url, db) => {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
};

const adminUrl = adminPgUrl();
const db = `gh_bench_console_tree_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${db}`);
await admin.query(`CREATE DATABASE ${db}_tree`);
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gh-bench-console-tree-'));
const ports = {
  auth: await freePort(),
  identity: await freePort(),
  tree: await freePort(),
  console: await freePort(),
};
const adminEmail = `bench-${randomUUID().slice(0, 8)}@example.test`;
const svcEnv = benchServiceEnv({ BOOTSTRAP_ADMIN_EMAIL: adminEmail });
const childEnv = { ...env };
for (const v of ['ISSUER', 'AUTH_URL', 'CONSOLE_URL', 'CORS_ORIGINS', 'NODE_OPTIONS']) delete childEnv[v];
let output = '';
const launcher = spawn(process.execPath, ['tools/launcher/start.mjs'], {
  cwd: benchRoot,
  stdio: ['ignore', 'pipe', 'pipe'],
  env: {
    ...childEnv,
    ...svcEnv,
    LAUNCHER_SKIP_BUILD: '1',
    DATA_DIR: dataDir,
    DATABASE_URL: withDb(adminUrl, db),
    TREE_DATABASE_URL: withDb(adminUrl, `${db}_tree`),
    AUTH_PORT: String(ports.auth),
    IDENTITY_PORT: String(ports.identity),
    TREE_PORT: String(ports.tree),
    CONSOLE_PORT: String(ports.console),
  },
});
launcher.stdout.on('data', (d) => (output += d));
launcher.stderr.on('data', (d) => (output += d));
const pool = new pg.Pool({ connectionString: withDb(adminUrl, `${db}_tree`), max: 2 });
let browser;
const results = { expand: [], open: [], link: [] };
const startLoad = os.loadavg()[0];

async function cleanUp() {
  await browser?.close().catch(() => undefined);
  await pool.end().catch(() => undefined);
  if (launcher.exitCode === null) {
    launcher.kill('SIGTERM');
    await new Promise((r) => launcher.once('exit', r));
  }
  rmSync(dataDir, { recursive: true, force: true });
  if (env.BENCH_KEEP !== '1') {
    await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`).catch(() => undefined);
    await admin.query(`DROP DATABASE IF EXISTS ${db}_tree WITH (FORCE)`).catch(() => undefined);
  } else log(`kept databases ${db} and ${db}_tree`);
  await admin.end();
}

/** In the page: clicks `click`, resolves when `done` matches; milliseconds to the DOM change and the next frame. */
/* global document, window, MutationObserver, PopStateEvent, requestAnimationFrame -- the timed part runs in the page */
const timed = (page, click, done) =>
  page.evaluate(
    async ([c, d]) => {
      const el = document.querySelector(c);
      if (!el) throw new Error(`no ${c}`);
      const t0 = performance.now();
      let dom = 0;
      await new Promise((resolve) => {
        const mo = new MutationObserver(() => {
          if (document.querySelector(d)) {
            dom = performance.now() - t0;
            mo.disconnect();
            resolve();
          }
        });
        mo.observe(document.body, { childList: true, subtree: true, attributes: true });
        el.click();
      });
      await new Promise((r) => requestAnimationFrame(() => r()));
      return { dom, frame: performance.now() - t0 };
    },
    [click, done],
  );

/** In the page: follows a link of the app (history push, as a router link does), until `done` matches. */
const timedLink = (page, href, done) =>
  page.evaluate(
    async ([h, d]) => {
      const t0 = performance.now();
      let dom = 0;
      await new Promise((resolve) => {
        const mo = new MutationObserver(() => {
          if (document.querySelector(d)) {
            dom = performance.now() - t0;
            mo.disconnect();
            resolve();
          }
        });
        mo.observe(document.body, { childList: true, subtree: true, attributes: true });
        setTimeout(() => {
          mo.disconnect();
          dom = Number.NaN;
          resolve();
        }, 30_000);
        window.history.pushState(null, '', h);
        window.dispatchEvent(new PopStateEvent('popstate'));
      });
      await new Promise((r) => window.requestAnimationFrame(() => r(undefined)));
      return { dom, frame: performance.now() - t0 };
    },
    [href, done],
  );

try {
  const deadline = Date.now() + 120_000;
  while (!output.includes('press Ctrl-C to stop')) {
    if (launcher.exitCode !== null) throw new Error(`launcher exited:\n${output}`);
    if (Date.now() > deadline) throw new Error(`services not ready:\n${output}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const treeApi = `http://127.0.0.1:${ports.tree}`;
  const token = await clientCredentialsToken(
    `http://127.0.0.1:${ports.auth}`,
    svcEnv.BOOTSTRAP_CLIENT_ID,
    svcEnv.BOOTSTRAP_CLIENT_SECRET,
    { resource: 'urn:gatehouse:tree' },
  );
  const call = async (method, p, body) => {
    const r = await fetch(`${treeApi}${p}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
    if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${await r.text()}`);
    return r.json();
  };
  await call('POST', '/api/v1/trees', { code: 'bench', name: 'Benchmark tree' });
  const v1 = /** @type {{ id: string; tree_id: string }} */ (
    await call('GET', '/api/v1/trees/bench/versions/v1')
  );
  /** @type {(text: string, params?: unknown[]) => Promise<any>} */
  const q = (text, params) => pool.query(text, params);
  log(`generating ${TOTAL.toLocaleString('en')} nodes (fan-out ${FANOUT}, depth ${DEPTH}) ...`);
  const genMs = await seedGeneratedVersion(q, v1, FANOUT, DEPTH);
  const t0 = performance.now();
  await q('VACUUM ANALYZE tree_nodes');
  log(
    `generated in ${(genMs / 1000).toFixed(1)} s, vacuum analyze ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  const idOf = async (label) =>
    /** @type {{ rows: { id: string }[] }} */ (await q(`SELECT tree_node_id($1, $2) AS id`, [v1.id, label]))
      .rows[0].id;

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  const consoleUrl = (p) => `http://localhost:${ports.console}${p}`;
  await page.goto(consoleUrl('/'));
  await page.click('#sign-in');
  await page.waitForSelector('input[name="username"]');
  await page.fill('input[name="username"]', adminEmail);
  await page.fill('input[name="password"]', svcEnv.BOOTSTRAP_ADMIN_PASSWORD);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#signed-in-as');
  const versionPage = consoleUrl('/trees/bench/versions/v1');
  const rootId = await idOf(1);
  const load = async () => {
    await page.goto(versionPage);
    // the lone root opens by itself: its children (depth 1) are the first level shown
    await page.waitForSelector(`#node-tree [data-parent="${rootId}"]`);
  };

  // ---- expand: a chain down the tree, REPEAT fresh siblings a depth
  await load();
  let parent = rootId;
  for (let d = 1; d < DEPTH; d++) {
    const siblings = await page.$$eval(`#node-tree [data-parent="${parent}"]`, (els) =>
      els.map((e) => e.getAttribute('data-key')),
    );
    for (const id of siblings.slice(0, REPEAT)) {
      const r = await timed(
        page,
        `#node-tree [data-key="${id}"] .twisty`,
        `#node-tree [data-parent="${id}"]`,
      );
      results.expand.push({ depth: d, ...r });
    }
    parent = siblings[0];
  }
  // ---- open: a deep node chosen in the search results, on a freshly loaded page
  for (let d = 1; d <= DEPTH; d++) {
    for (let i = 0; i < Math.min(REPEAT, FANOUT ** d); i++) {
      const label = firstLabel(FANOUT, d) + Math.floor(((i + 0.5) * FANOUT ** d) / REPEAT);
      const id = await idOf(label);
      await load();
      await page.getByLabel('Find a node (code or name)').fill(`N${label}`);
      await page.waitForSelector(`.find-results [data-node="${id}"]`, { timeout: 60_000 });
      const r = await timed(
        page,
        `.find-results [data-node="${id}"]`,
        `#node-tree [data-key="${id}"][aria-selected="true"]`,
      );
      results.open.push({ depth: d, ...r });
    }
  }
  // ---- link: the console's own link to a deep node (?node=&path=<ancestors>), followed inside the app
  const parentLabel = (label, d) =>
    firstLabel(FANOUT, d - 1) + Math.floor((label - firstLabel(FANOUT, d)) / FANOUT);
  for (let d = 1; d <= DEPTH; d++) {
    for (let i = 0; i < Math.min(REPEAT, FANOUT ** d); i++) {
      const label = firstLabel(FANOUT, d) + Math.floor(((i + 0.5) * FANOUT ** d) / REPEAT);
      const labels = [label];
      for (let k = d; k > 0; k--) labels.unshift(parentLabel(labels[0], k));
      const ids = await Promise.all(labels.map(idOf));
      const id = ids.pop();
      await load();
      const r = await timedLink(
        page,
        `/trees/bench/versions/v1?node=${id}&path=${ids.join(',')}`,
        `#node-tree [data-key="${id}"][aria-selected="true"]`,
      );
      if (Number.isNaN(r.dom)) throw new Error(`the link to ${id} did not show it within 30 s`);
      results.link.push({ depth: d, ...r });
    }
  }
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  await cleanUp();
}

if (process.exitCode !== 1) {
  const cpus = os.cpus();
  const machine = `${cpus[0]?.model ?? 'unknown'} x ${cpus.length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}, Node ${process.version}`;
  const endLoad = os.loadavg()[0];
  const lines = [
    '| what | depth | n | median (DOM) | median (next frame) | p95 (next frame) | max (next frame) | target |',
    '|---|---|---|---|---|---|---|---|',
  ];
  const f = (x) => `${x.toFixed(1)} ms`;
  for (const [kind, label] of [
    ['expand', 'expand a node: its children fetched and shown'],
    ['open', 'open a node found by search: ancestors, then their levels'],
    ['link', "open the console's link to a node (ancestors named): their levels at once"],
  ]) {
    const depths = [...new Set(results[kind].map((r) => r.depth))];
    for (const d of depths) {
      const xs = results[kind].filter((r) => r.depth === d);
      const frame = xs.map((r) => r.frame);
      lines.push(
        `| ${label} | ${d} | ${xs.length} | ${f(median(xs.map((r) => r.dom)))} | ${f(median(frame))} | ${f(percentile(frame, 95))} | ${f(Math.max(...frame))} | < 300 ms |`,
      );
    }
  }
  const table = lines.join('\n');
  console.log(table);
  console.log(
    `machine: ${machine}; load average ${startLoad.toFixed(2)} at the start, ${endLoad.toFixed(2)} at the end`,
  );
  if (DOCS) {
    const date = new Date().toISOString().slice(0, 16).replace('T', ' ');
    const section = [
      '<!-- console-tree-view:start -->',
      `## Console: the tree view on ${TOTAL.toLocaleString('en')} nodes (${date} UTC)`,
      '',
      '`node tools/bench/console/tree-view.mjs` (after `npx nx run-many -t build -p auth,identity,tree,console`): the',
      `services started as \`npm start\` starts them, a version of ${TOTAL.toLocaleString('en')} nodes (fan-out ${FANOUT}, depth ${DEPTH},`,
      "tools/bench/tree/seed.mjs), the built console in Debian's Chromium (playwright-core), signed in as the bootstrap",
      'admin. Timed in the page, from the click to the DOM change (MutationObserver) and to the next animation frame:',
      `expanding a node (${REPEAT} different nodes a depth, each level fetched for the first time: one`,
      '`GET .../nodes?q=parent_id = ...` of 100 rows at most) and opening a node chosen in the search results on a',
      'freshly loaded page (its ancestors read by parent links, each level asked for as soon as its node is known), and',
      "following the console's own link to a node, which names its ancestors (`?node=<id>&path=<ids>`: their levels at",
      'once, no walk), inside the app (history push and popstate, as a router link).',
      '',
      `Machine: ${machine}. Load average ${startLoad.toFixed(2)} at the start, ${endLoad.toFixed(2)} at the end: the machine`,
      'was shared with other sessions running builds and tests, so these are figures of a busy machine.',
      '',
      table,
      '<!-- console-tree-view:end -->',
    ].join('\n');
    const doc = readFileSync(DOCS, 'utf8');
    const re = /<!-- console-tree-view:start -->[\s\S]*?<!-- console-tree-view:end -->/;
    writeFileSync(DOCS, re.test(doc) ? doc.replace(re, section) : `${doc.trimEnd()}\n\n${section}\n`);
    log(`written into ${DOCS}`);
  }
}
