import preset from '../../jest.preset.mjs';

export default {
  ...preset,
  displayName: 'reliability',
  rootDir: '.',
  testMatch: ['<rootDir>/test/**/*.spec.mjs'],
  moduleFileExtensions: ['mjs', 'js', 'ts', 'json'],
  testTimeout: 240_000,
};
