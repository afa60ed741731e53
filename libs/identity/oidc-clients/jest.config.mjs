import preset from '../../../jest.preset.mjs';

export default {
  ...preset,
  displayName: 'oidc-clients',
  rootDir: '.',
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts'],
};
