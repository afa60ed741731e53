import preset from '../../../jest.preset.mjs';

export default {
  ...preset,
  displayName: 'identity-data',
  rootDir: '.',
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts'],
};
