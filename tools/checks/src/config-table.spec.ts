// The README's configuration table is generated from the env schemas the services validate at boot, so it can
// never miss a variable. Regenerate after adding one: UPDATE_README=1 npm test -- -p workspace-checks
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { commonEnv, type EnvSchema } from '@gatehouse/config';
/* eslint-disable @nx/enforce-module-boundaries -- reads the apps' env schemas to document them */
import { authEnv } from '@gatehouse/token-server';
import { identityEnv } from '../../../apps/identity/src/config.js';
import { treeEnv } from '../../../apps/tree/src/config.js';
import { normalizeTable } from './markdown-table.js';
/* eslint-enable @nx/enforce-module-boundaries */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const readmePath = path.join(root, 'README.md');
const START = '<!-- config-table:start -->';
const END = '<!-- config-table:end -->';

/** Variables read by plain-JS tools (launcher, test runner), which have no schema object. */
const toolVars: [string, string, string][] = [
  [
    'EMBEDDED_PG_PORT',
    '54329',
    '`npm start`: port of the embedded PostgreSQL (used only when DATABASE_URL is unset)',
  ],
  [
    'EMBEDDED_PG_PASSWORD',
    'generated into `DATA_DIR/pg-password`',
    '`npm start`: password of the embedded PostgreSQL (secret)',
  ],
  // apps/console/server/main.mjs (plain JavaScript, no schema object); CONSOLE_PORT is in the services' schemas
  [
    'CONSOLE_AUTH_URL',
    '`ISSUER`, else http://localhost:<AUTH_PORT>',
    "console: the token server as the browser reaches it (the console's /config.json and CSP)",
  ],
  [
    'CONSOLE_IDENTITY_URL',
    'http://localhost:<IDENTITY_PORT>',
    'console: the management API as the browser reaches it',
  ],
  ['CONSOLE_TREE_URL', 'http://localhost:<TREE_PORT>', 'console: the tree API as the browser reaches it'],
  [
    'CONSOLE_CLIENT_ID',
    'the seeded console client',
    'console: the OAuth client it signs in as (the token server seeds `a3f7c2d0-5e1b-5c8a-9d4f-0c6b1e2a7f93`)',
  ],
  ['CONSOLE_HOST', 'all interfaces', 'console: the address its static server listens on'],
  ['CONSOLE_STATIC_DIR', '`dist/apps/console/public`', 'console: the built single-page app it serves'],
  ['LAUNCHER_SKIP_BUILD', 'false', '`npm start`: skip the swc build and run what is in `dist/`'],
  ['LAUNCHER_DIST_DIR', '`dist`', '`npm start`: where the built apps are'],
  ['LAUNCHER_READY_TIMEOUT_SEC', '60', '`npm start`: how long to wait for every `/readyz`'],
  [
    'TEST_PG_URL',
    'embedded server',
    'tests: PostgreSQL where test databases are created (falls back to DATABASE_URL)',
  ],
  ['TEST_REDIS_URL', 'redis://127.0.0.1:6379 when it answers', 'tests: Redis for the Redis-backed tests'],
  [
    'TEST_SCHEDULE',
    'files',
    "`npm test`: `files` runs the selected projects' test files in one Jest run (one queue, `TEST_WORKERS` files at a time); `projects` runs each project's own Jest run through Nx (`TEST_PARALLEL` at a time), as CI's `nx affected` does",
  ],
  [
    'TEST_PARALLEL',
    '2',
    '`npm test` with `TEST_SCHEDULE=projects`: projects whose tests run at the same time (`nx run-many --parallel`)',
  ],
  [
    'TEST_WORKERS',
    "cores + 1 (a project's: cores - 1)",
    "tests: Jest worker processes (a count, or a share of the cores such as `50%`) of `npm test`'s one queue, or of one project's own run (Jest's default there)",
  ],
];

function table(): string {
  const services: Record<string, EnvSchema> = { auth: authEnv, identity: identityEnv, tree: treeEnv };
  const rows = new Map<string, { services: string[]; spec: EnvSchema[string] }>();
  for (const [name, spec] of Object.entries(commonEnv)) rows.set(name, { services: ['all'], spec });
  for (const [service, schema] of Object.entries(services)) {
    for (const [name, spec] of Object.entries(schema)) {
      const row = rows.get(name) ?? { services: [], spec };
      if (!row.services.includes('all')) row.services.push(service);
      rows.set(name, row);
    }
  }
  const lines = ['| variable | read by | default | meaning |', '|---|---|---|---|'];
  for (const [name, { services: s, spec }] of rows) {
    const def =
      spec.default === undefined ? (spec.optional ? 'unset' : '**required**') : `\`${String(spec.default)}\``;
    const meaning = `${spec.description}${spec.secret ? ' (secret)' : ''}`.replaceAll('|', '\\|');
    lines.push(`| \`${name}\` | ${s.join(', ')} | ${def === '``' ? 'empty' : def} | ${meaning} |`);
  }
  for (const [name, def, meaning] of toolVars) lines.push(`| \`${name}\` | tools | ${def} | ${meaning} |`);
  return lines.join('\n');
}

describe('README configuration table', () => {
  it('lists every variable the services validate, with default and meaning', () => {
    const readme = readFileSync(readmePath, 'utf8');
    const start = readme.indexOf(START);
    const end = readme.indexOf(END);
    expect(start).toBeGreaterThan(0);
    expect(end).toBeGreaterThan(start);
    const expected = `${START}\n${table()}\n${END}`;
    const actual = readme.slice(start, end + END.length);
    if (process.env.UPDATE_README === '1' && normalizeTable(actual) !== normalizeTable(expected)) {
      writeFileSync(readmePath, readme.replace(actual, expected));
      return;
    }
    expect(normalizeTable(actual)).toBe(normalizeTable(expected));
  });
});
