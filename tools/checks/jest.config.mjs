import preset from '../../jest.preset.mjs';

export default {
  ...preset,
  displayName: 'workspace-checks',
  rootDir: '.',
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
};
