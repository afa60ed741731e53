import preset from '../../jest.preset.mjs';

export default {
  ...preset,
  displayName: 'sdk',
  rootDir: '.',
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts'],
};
