#!/usr/bin/env node
// `npm run sdk:generate`: starts auth, identity and tree from the current sources, fetches their served
// /docs/openapi.json and writes libs/sdk/src/generated/{auth,identity,tree}.ts. `--check`: writes nothing, exits 1
// when a committed file differs from what the services serve now (the Jest spec test/generated.spec.ts checks the
// same in `npm test`).
//
// PostgreSQL: TEST_PG_URL, else DATABASE_URL, else an embedded server in a temporary directory (stopped at the end).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { prepareTestEnvironment } from '../../../tools/jest/test-env.mjs';
import { GENERATED_DIR, generate } from './generate.mjs';
import { REPO_ROOT, startServices } from './services.mjs';

const check = process.argv.includes('--check');
const testEnv = await prepareTestEnvironment({ log: (m) => process.stderr.write(`${m}\n`) });
let services;
let code = 0;
try {
  services = await startServices();
  const files = await generate({
    auth: services.authUrl,
    identity: services.identityUrl,
    tree: services.treeUrl,
  });
  mkdirSync(GENERATED_DIR, { recursive: true });
  for (const [file, content] of files) {
    const rel = path.relative(REPO_ROOT, file);
    let current;
    try {
      current = readFileSync(file, 'utf8');
    } catch {
      current = undefined;
    }
    if (current === content) {
      process.stdout.write(`${rel}: unchanged\n`);
    } else if (check) {
      process.stdout.write(`${rel}: differs from the served document; run npm run sdk:generate\n`);
      code = 1;
    } else {
      writeFileSync(file, content);
      process.stdout.write(`${rel}: written\n`);
    }
  }
} catch (err) {
  process.stderr.write(`sdk:generate failed: ${err instanceof Error ? err.stack : err}\n`);
  code = 1;
} finally {
  await services?.stop();
  await testEnv.cleanup();
}
process.exit(code);
