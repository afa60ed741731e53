// ESLint flat config: type-aware rules that catch real bugs, and Nx module boundaries on two tag axes.
import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import prettier from 'eslint-config-prettier';

/** Node's globals, for the .mjs tools (the `globals` package is not a dependency of ours). */
const NODE_GLOBALS = Object.fromEntries(
  [
    'AbortController',
    'AbortSignal',
    'Buffer',
    'URL',
    'URLSearchParams',
    'TextDecoder',
    'TextEncoder',
    'clearImmediate',
    'clearInterval',
    'clearTimeout',
    'console',
    'fetch',
    'global',
    'performance',
    'process',
    'queueMicrotask',
    'setImmediate',
    'setInterval',
    'setTimeout',
    'structuredClone',
  ].map((name) => [name, 'readonly']),
);

/**
 * Who may import whom, on two tag axes. `scope:identity-data` is the identity tables (and their outbox): read by the
 * token server and the management API, not by tree. `scope:testing` / `type:testing` are harnesses for tests (the
 * real token server for identity's and tree's tests): only test files may import them (TEST_DEP_CONSTRAINTS).
 */
const DEP_CONSTRAINTS = [
  { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
  { sourceTag: 'scope:identity-data', onlyDependOnLibsWithTags: ['scope:identity-data', 'scope:shared'] },
  {
    sourceTag: 'scope:auth',
    onlyDependOnLibsWithTags: ['scope:auth', 'scope:identity-data', 'scope:shared'],
  },
  {
    sourceTag: 'scope:identity',
    onlyDependOnLibsWithTags: ['scope:identity', 'scope:identity-data', 'scope:shared'],
  },
  { sourceTag: 'scope:tree', onlyDependOnLibsWithTags: ['scope:tree', 'scope:shared'] },
  // the admin console (a browser app): the SDK and other shared libs only, never a service's code
  { sourceTag: 'scope:console', onlyDependOnLibsWithTags: ['scope:console', 'scope:shared'] },
  {
    sourceTag: 'scope:testing',
    onlyDependOnLibsWithTags: ['scope:testing', 'scope:auth', 'scope:identity-data', 'scope:shared'],
  },
  { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:feature', 'type:data-access', 'type:util'] },
  { sourceTag: 'type:feature', onlyDependOnLibsWithTags: ['type:feature', 'type:data-access', 'type:util'] },
  { sourceTag: 'type:data-access', onlyDependOnLibsWithTags: ['type:data-access', 'type:util'] },
  { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:util'] },
  {
    sourceTag: 'type:testing',
    onlyDependOnLibsWithTags: ['type:testing', 'type:feature', 'type:data-access', 'type:util'],
  },
];

/** Test files of identity and tree may also use the testing harnesses. */
const TEST_DEP_CONSTRAINTS = DEP_CONSTRAINTS.map((c) =>
  ['scope:identity', 'scope:tree', 'type:app'].includes(c.sourceTag)
    ? {
        ...c,
        onlyDependOnLibsWithTags: [
          ...c.onlyDependOnLibsWithTags,
          c.sourceTag === 'type:app' ? 'type:testing' : 'scope:testing',
        ],
      }
    : c,
);

const TEST_FILES = ['**/*.spec.ts', '**/test/**/*.ts'];

/** Options of @nx/enforce-module-boundaries. */
function moduleBoundaries(depConstraints) {
  return { enforceBuildableLibDependency: false, allow: [], depConstraints };
}

export default [
  {
    ignores: [
      '**/dist',
      '**/node_modules',
      '**/.nx',
      '**/.data',
      '**/.jest-cache',
      '**/coverage',
      '.bench-compare',
      '**/*.js',
    ],
  },
  // The plain-ESM tools (launcher, benchmarks, test runner, Jest setup): `npm run lint:tools`.
  {
    files: ['**/*.mjs'],
    ...js.configs.recommended,
    languageOptions: { ecmaVersion: 2024, sourceType: 'module', globals: NODE_GLOBALS },
  },
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@nx/enforce-module-boundaries': ['error', moduleBoundaries(DEP_CONSTRAINTS)],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false, attributes: false } },
      ],
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'off',
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@gatehouse/*/*', '**/libs/*/*/src/*', '../../libs/**'],
              message: 'Import a lib through its alias (index.ts) only.',
            },
          ],
        },
      ],
    },
  },
  {
    files: TEST_FILES,
    rules: { '@nx/enforce-module-boundaries': ['error', moduleBoundaries(TEST_DEP_CONSTRAINTS)] },
  },
  {
    files: [...TEST_FILES, 'tools/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off', '@typescript-eslint/no-explicit-any': 'off' },
  },
  prettier,
];
