#!/usr/bin/env node
// `npm test [-- <nx args>]`: every project's tests against ONE PostgreSQL for the whole run.
// Uses TEST_PG_URL or DATABASE_URL when set; otherwise starts an embedded server (temporary data dir, free port) and
// exports TEST_PG_URL for every Jest process (their global setup then starts nothing). Exits with the tests' code
// and stops the server. Examples: `npm test`, `npm test -- -p tree`, `npm test -- -p db,testing --skip-nx-cache`.
//
// TEST_SCHEDULE picks how the test files of the selected projects share the machine:
//   files (default)  ONE Jest run over every selected project (`jest --projects ...`), so one queue of test files,
//                    slowest first from the previous run's timings, TEST_WORKERS at a time (default: cores + 1).
//                    Nx still selects the projects (the nx args, e.g. `-p tree`) and first runs what their test
//                    targets depend on (the services' builds for the reliability smoke).
//   projects         `nx run-many -t test --parallel=$TEST_PARALLEL <args>` as CI's `nx affected` does: each
//                    project's own Jest run, TEST_PARALLEL projects at a time, TEST_WORKERS files each.
// Why one queue: with a queue per project, the longest project (identity) was the critical path, the libraries
// went first (Nx runs projects with more dependents first) and the reliability smoke came last, alone.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os, { constants, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareTestEnvironment } from '../jest/test-env.mjs';

const workspace = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const nxArgs = process.argv.slice(2);
const schedule = (process.env.TEST_SCHEDULE || 'files').trim();
if (schedule !== 'files' && schedule !== 'projects') {
  process.stderr.write(`test: TEST_SCHEDULE must be "files" or "projects", got "${schedule}"\n`);
  process.exit(2);
}
const JEST_NODE_OPTIONS = '--experimental-vm-modules --no-warnings=ExperimentalWarning';

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
const childEnv = { ...process.env, GATEHOUSE_TEST_SUMMARY_FILE: summaryFile };

let child;
let signalled;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    // A terminal Ctrl-C already reached the child (same process group); forward the others. A second one forces.
    if (signalled) child?.kill('SIGKILL');
    else if (signal !== 'SIGINT') child?.kill(/** @type {NodeJS.Signals} */ (signal));
    signalled = signal;
  });
}

/** Runs a command with inherited stdio; resolves with its exit code and signal. */
function run(command, args, options = {}) {
  return new Promise((resolve) => {
    child = spawn(command, args, { stdio: 'inherit', env: childEnv, cwd: workspace, ...options });
    child.once('error', (err) => {
      process.stderr.write(`test: could not run ${command}: ${err.message}\n`);
      resolve({ code: 1, signal: null });
    });
    child.once('exit', (c, s) => resolve({ code: c, signal: s }));
  });
}

/**
 * The Jest configs of the test tasks the nx args select, and the other tasks those depend on (grouped by target),
 * from Nx's task graph. Undefined when a test target is not the inferred `jest` command (then Nx runs them).
 */
async function selectedJestProjects() {
  const graphFile = path.join(summaryDir, 'graph.json');
  const r = await run('npx', ['nx', 'run-many', '-t', 'test', ...nxArgs, `--graph=${graphFile}`], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (r.code !== 0 || !existsSync(graphFile)) return { failed: r };
  const { graph, tasks } = JSON.parse(readFileSync(graphFile, 'utf8'));
  const configs = [];
  const deps = new Map();
  for (const task of Object.values(tasks.tasks)) {
    const { project, target } = task.target;
    if (target !== 'test') {
      deps.set(target, [...(deps.get(target) ?? []), project]);
      continue;
    }
    const options = graph.nodes[project]?.data?.targets?.test?.options ?? {};
    const config = path.join(workspace, task.projectRoot, 'jest.config.mjs');
    if (options.command !== 'jest' || !existsSync(config)) return undefined;
    configs.push(config);
  }
  return { configs, deps };
}

let result;
const selected = schedule === 'files' ? await selectedJestProjects() : undefined;
if (selected?.failed) {
  result = selected.failed;
} else if (!selected) {
  const parallel = process.env.TEST_PARALLEL || '2';
  // TEST_WORKERS passes through when set (jest.preset.mjs). Unset by default: on 2 cores, 2 workers per project (4
  // test files at once) made a timing comparison (password grant, known vs unknown user) fail in CI.
  result = await run('npx', ['nx', 'run-many', '-t', 'test', `--parallel=${parallel}`, ...nxArgs]);
} else if (selected.configs.length === 0) {
  process.stdout.write('test: no project with tests selected\n');
  result = { code: 0, signal: null };
} else {
  result = { code: 0, signal: null };
  for (const [target, projects] of selected.deps) {
    if (result.code !== 0 || signalled) break;
    const flags = nxArgs.filter((a) => a === '--skip-nx-cache');
    result = await run('npx', ['nx', 'run-many', '-t', target, '-p', projects.join(','), ...flags]);
  }
  if (result.code === 0 && !signalled) {
    // More files at once than cores: a file waiting (a child process, a timer, the database) leaves its core to
    // another. One queue for the whole run keeps that to TEST_WORKERS files, whatever the projects.
    const workers = process.env.TEST_WORKERS?.trim() || String(os.availableParallelism() + 1);
    result = await run('npx', ['jest', '--config', 'tools/jest/all-projects.config.mjs'], {
      env: {
        ...childEnv,
        GATEHOUSE_TEST_PROJECTS: JSON.stringify(selected.configs),
        GATEHOUSE_TEST_WORKERS: workers,
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${JEST_NODE_OPTIONS}`.trim(),
      },
    });
  }
}
const { code, signal } = result;

try {
  await env.cleanup();
} catch (err) {
  process.stderr.write(`test: cleanup failed: ${err instanceof Error ? err.message : err}\n`);
}

// One closing summary for the whole run (every Jest run appended its files and counts): each project's span in the
// run, the slowest files, the totals. The raw lines stay in .jest-cache/last-test-run.jsonl.
if (existsSync(summaryFile)) {
  const total = { passed: 0, failed: 0, skipped: 0 };
  const runs = [];
  const files = [];
  for (const line of readFileSync(summaryFile, 'utf8').split('\n').filter(Boolean)) {
    const r = JSON.parse(line);
    if (r.type === 'file') {
      files.push(r);
      continue;
    }
    runs.push(r);
    for (const k of Object.keys(total)) total[k] += r[k] ?? 0;
  }
  try {
    mkdirSync(path.join(workspace, '.jest-cache'), { recursive: true });
    copyFileSync(summaryFile, path.join(workspace, '.jest-cache', 'last-test-run.jsonl'));
  } catch {
    /* the summary below is enough */
  }
  const t0 = Math.min(...runs.map((r) => r.start ?? Infinity), ...files.map((f) => f.start));
  if (Number.isFinite(t0) && files.length > 1) {
    const s = (ms) => `${(ms / 1000).toFixed(1)} s`;
    const projects = new Map();
    for (const f of files) {
      const p = projects.get(f.project) ?? { start: Infinity, end: 0, summed: 0, files: 0 };
      p.start = Math.min(p.start, f.start);
      p.end = Math.max(p.end, f.end);
      p.summed += f.end - f.start;
      p.files += 1;
      projects.set(f.project, p);
    }
    const end = Math.max(...runs.map((r) => r.end ?? 0), ...files.map((f) => f.end));
    const out = [
      `\ntest files: ${s(end - t0)} from the first Jest start to the last end; per project, from its first file's start to its last file's end:`,
    ];
    for (const [name, p] of [...projects].sort((x, y) => x[1].start - y[1].start)) {
      out.push(
        `  ${name.padEnd(16)} +${s(p.start - t0).padStart(8)} to +${s(p.end - t0).padStart(8)}, ${String(p.files).padStart(3)} files, ${s(p.summed).padStart(8)} summed`,
      );
    }
    out.push('slowest files:');
    for (const f of [...files].sort((a, b) => b.end - b.start - (a.end - a.start)).slice(0, 10)) {
      out.push(`  ${s(f.end - f.start).padStart(8)}  ${f.path}`);
    }
    process.stdout.write(`${out.join('\n')}\n`);
  }
  process.stdout.write(`\ntests: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped\n`);
}
rmSync(summaryDir, { recursive: true, force: true });

if (signal) process.exit(128 + (constants.signals[signal] ?? 1));
if (signalled) process.exit(128 + constants.signals[signalled]);
process.exit(code ?? 1);
