// The committed generated types are what the services serve now: the three apps are started from the current
// sources, their /docs/openapi.json fetched and turned into TypeScript in memory, and each file compared with the
// committed one. A change to a service's API that was not followed by `npm run sdk:generate` fails here.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fetchDocuments, generate, normalise, type ServiceUrls } from '../scripts/generate.mjs';
import { REPO_ROOT, startServices, type RunningServices } from '../scripts/services.mjs';

let services: RunningServices;
let urls: ServiceUrls;

beforeAll(async () => {
  services = await startServices();
  urls = { auth: services.authUrl, identity: services.identityUrl, tree: services.treeUrl };
}, 180_000);

afterAll(async () => {
  await services?.stop();
});

/** The first line that differs, with a few lines around it, for the failure message. */
function firstDifference(committed: string, served: string): string {
  const a = committed.split('\n');
  const b = served.split('\n');
  const i = a.findIndex((line, n) => line !== b[n]);
  const at = i === -1 ? Math.min(a.length, b.length) : i;
  const show = (lines: string[]) => lines.slice(Math.max(0, at - 2), at + 3).join('\n');
  return `first difference at line ${at + 1}\n--- committed\n${show(a)}\n+++ served now\n${show(b)}`;
}

describe('generated SDK types', () => {
  it('match the documents the services serve (else: npm run sdk:generate)', async () => {
    const files = await generate(urls);
    expect([...files.keys()].map((f) => path.relative(REPO_ROOT, f)).sort()).toEqual([
      'libs/sdk/src/generated/auth.ts',
      'libs/sdk/src/generated/identity.ts',
      'libs/sdk/src/generated/tree.ts',
    ]);
    const stale: string[] = [];
    for (const [file, served] of files) {
      let committed = '';
      try {
        committed = readFileSync(file, 'utf8');
      } catch {
        /* missing: stale */
      }
      if (committed !== served) {
        stale.push(`${path.relative(REPO_ROOT, file)}: ${firstDifference(committed, served)}`);
      }
    }
    if (stale.length) {
      throw new Error(
        `The generated SDK types are stale: a service's OpenAPI document changed.\n` +
          `Fix: run \`npm run sdk:generate\` and commit libs/sdk/src/generated/.\n\n${stale.join('\n\n')}`,
      );
    }
  }, 240_000);

  it('depend on nothing of the serving host: the documents name no origin and no servers', async () => {
    const docs = await fetchDocuments(urls);
    for (const name of ['auth', 'identity', 'tree'] as const) {
      const text = JSON.stringify(docs[name]);
      for (const origin of Object.values(urls)) expect(text).not.toContain(new URL(origin).host);
      // what normalise() takes out is empty today (`servers: []`); it stays as a guard for a service that adds one
      expect((docs[name] as { servers?: unknown[] }).servers ?? []).toEqual([]);
      const { servers: _servers, ...rest } = docs[name] as Record<string, unknown>;
      expect(normalise(docs[name], urls)).toEqual(rest);
    }
  });
});
