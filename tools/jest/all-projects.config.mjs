// Root Jest config of `npm test`'s one-queue run (tools/scripts/test.mjs, TEST_SCHEDULE=files): every project named
// in GATEHOUSE_TEST_PROJECTS (JSON list of jest.config.mjs paths) in ONE Jest run, so their test files share one
// worker pool. A project's own config still runs alone (its Nx target, CI's `nx affected`).
// Jest takes reporters, the timeout and the worker count from the root config only, and warns about them in a
// project: they are set here (from the preset) and left out of the projects.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import preset from '../../jest.preset.mjs';

const ROOT_ONLY = ['reporters', 'testTimeout', 'maxWorkers'];

const workers = process.env.GATEHOUSE_TEST_WORKERS?.trim() || '1';
const paths = JSON.parse(process.env.GATEHOUSE_TEST_PROJECTS || '[]');
const projects = await Promise.all(
  paths.map(async (file) => {
    const { default: config } = await import(pathToFileURL(path.resolve(file)).href);
    const configPath = path.resolve(file);
    const rootDir = path.resolve(path.dirname(configPath), config.rootDir ?? '.');
    // The id Jest gives the project in its own run (`jest` in its directory): the same timings of the last run
    // (slowest files first) and the same transform cache, whichever way it ran.
    const id = createHash('sha1').update(rootDir).update(configPath).update('0').digest('hex').slice(0, 32);
    const project = { ...config, rootDir, id };
    for (const key of ROOT_ONLY) delete project[key];
    return project;
  }),
);

export default {
  rootDir: path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..'),
  projects,
  reporters: preset.reporters,
  testTimeout: preset.testTimeout,
  // From TEST_WORKERS (tools/scripts/test.mjs; default there: cores + 1): a count or a share such as `150%`.
  maxWorkers: /^\d+$/.test(workers) ? Number(workers) : workers,
};
