import preset from '../../jest.preset.mjs';

// Unit tests of the console's pure logic (src/lib); its pages are tested in Chromium (test/*.browser.e2e.spec.ts).
export default {
  ...preset,
  displayName: 'console',
  rootDir: '.',
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts'],
};
