import preset from '../../../jest.preset.mjs';

export default {
  ...preset,
  displayName: 'changes',
  rootDir: '.',
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts'],
};
