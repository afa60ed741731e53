import preset from '../../../jest.preset.mjs';

export default {
  ...preset,
  displayName: 'query',
  rootDir: '.',
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts'],
};
