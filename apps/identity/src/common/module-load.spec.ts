import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { jest } from '@jest/globals';

const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FEATURES = [
  'common',
  'clients',
  'client-access',
  'resources',
  'scopes',
  'users',
  'roles',
  'groups',
  'memberships',
];

/** The modules that build values from other features' modules while loading, e.g. `clients/client.record.ts`. */
const files = FEATURES.flatMap((dir) =>
  readdirSync(path.join(src, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(record|sql|queries|presenter|module)\.ts$|named-records\.ts$|link-kinds\.ts$/.test(f))
    .map((f) => `${dir}/${f}`),
);

/**
 * The features import each other's record helpers (a client embeds resources, a resource embeds clients). Each
 * module must load first on its own, whatever the import order: a value used while loading must come from a leaf.
 */
describe('management modules', () => {
  it.each(files)('%s loads on its own', async (file) => {
    await jest.isolateModulesAsync(async () => {
      await import(path.join(src, file));
    });
  });
});
