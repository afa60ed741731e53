import preset from '../../jest.preset.mjs';

export default {
  ...preset,
  displayName: 'e2e-smoke',
  rootDir: '.',
  testMatch: ['<rootDir>/test/**/*.spec.ts'],
  testTimeout: 120000,
};
