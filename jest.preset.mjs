// Shared Jest preset: native ESM (run with NODE_OPTIONS=--experimental-vm-modules), swc transform.
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.dirname(fileURLToPath(import.meta.url));

// TEST_WORKERS: Jest workers of one project's own run (a count, or a share of the cores such as `50%`). Unset: Jest's
// default, cores - 1, which on a 2-core machine runs every file of a project in one process, one after another.
// `npm test`'s one-queue run (tools/jest/all-projects.config.mjs) takes its worker count from tools/scripts/test.mjs.
const workers = process.env.TEST_WORKERS?.trim();

export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  resolver: '@nx/jest/plugins/resolver',
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
          target: 'es2023',
          keepClassNames: true,
        },
        module: { type: 'es6' },
        sourceMaps: 'inline',
      },
    ],
  },
  cacheDirectory: path.join(root, '.jest-cache'),
  globalSetup: path.join(root, 'tools/jest/global-setup.mjs'),
  globalTeardown: path.join(root, 'tools/jest/global-teardown.mjs'),
  reporters: ['default', path.join(root, 'tools/jest/summary-reporter.mjs')],
  testTimeout: 30000,
  ...(workers ? { maxWorkers: /^\d+$/.test(workers) ? Number(workers) : workers } : {}),
};
