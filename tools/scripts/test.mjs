#!/usr/bin/env node
// `npm test [-- <nx args>]`: every project's tests against ONE PostgreSQL for the whole run.
// Uses TEST_PG_URL or DATABASE_URL when set; otherwise starts an embedded server (temporary data dir, free port),
// exports TEST_PG_URL for every Jest process Nx starts (their global setup then starts nothing), runs
// `nx run-many -t test --parallel=2 <args>`, exits with its code and stops the server.
// Examples: `npm test`, `npm test -- -p tree`, `npm test -- -p db,testing --skip-nx-cache`.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import path from 'node:path';
import { prepareTestEnvironment } from '../jest/test-env.mjs';

const parallel = process.env.TEST_PARALLEL || '2';
const args = ['nx', 'run-many', '-t', 'test', `--parallel=${parallel}`, ...process.argv.slice(2)];

let env;
try {
  // Own process group: a Ctrl-C reaches Nx and Jest, and the database outlives them until we stop it.
  env = await prepareTestEnvironment({ detached: true, killOnSignal: false });
} catch (err) {
  process.stderr.write(
    `test: could not prepare the test database: ${err instanceof Error ? err.message : err}\n`,
  );
  process.exit(1);
}

const summaryDir = mkdtempSync(path.join(tmpdir(), 'gh-test-summary-'));
const summaryFile = path.join(summaryDir, 'runs.jsonl');
const child = spawn('npx', args, {
  stdio: 'inherit',
  env: {
    ...process.env,
    // TEST_WORKERS passes through when set. It is not set by default: on 2 cores, 2 workers per project (4 test files
    // at once) brought little on a quiet machine and made a timing comparison (password grant, known vs unknown
    // user) fail in CI.
    GATEHOUSE_TEST_SUMMARY_FILE: summaryFile,
  },
});

let signalled;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    // A terminal Ctrl-C already reached Nx (same process group); forward the others. A second one forces.
    if (signalled) child.kill('SIGKILL');
    else if (signal !== 'SIGINT') child.kill(/** @type {NodeJS.Signals} */ (signal));
    signalled = signal;
  });
}

const { code, signal } = await new Promise((resolve) => {
  child.once('error', (err) => {
    process.stderr.write(`test: could not run nx: ${err.message}\n`);
    resolve({ code: 1, signal: null });
  });
  child.once('exit', (c, s) => resolve({ code: c, signal: s }));
});

try {
  await env.cleanup();
} catch (err) {
  process.stderr.write(`test: cleanup failed: ${err instanceof Error ? err.message : err}\n`);
}

// One closing line for the whole run (every project's Jest run appended its counts).
if (existsSync(summaryFile)) {
  const total = { passed: 0, failed: 0, skipped: 0 };
  for (const line of readFileSync(summaryFile, 'utf8').split('\n').filter(Boolean)) {
    const r = JSON.parse(line);
    for (const k of Object.keys(total)) total[k] += r[k] ?? 0;
  }
  process.stdout.write(`\ntests: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped\n`);
}
rmSync(summaryDir, { recursive: true, force: true });

if (signal) process.exit(128 + (constants.signals[signal] ?? 1));
if (signalled) process.exit(128 + constants.signals[signalled]);
process.exit(code ?? 1);
