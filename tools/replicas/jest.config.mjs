import preset from '../../jest.preset.mjs';

export default {
  ...preset,
  displayName: 'replicas',
  rootDir: '.',
  testMatch: ['<rootDir>/test/**/*.spec.mjs'],
  moduleFileExtensions: ['mjs', 'js', 'ts', 'json'],
  testTimeout: 180_000,
};
