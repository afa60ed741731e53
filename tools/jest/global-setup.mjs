// Jest global setup for every project (referenced by jest.preset.mjs).
// Uses TEST_PG_URL / DATABASE_URL when set (e.g. exported by `npm test`), else starts one embedded PostgreSQL for
// this Jest run. See ./test-env.mjs for the variables it sets.
import { prepareTestEnvironment } from './test-env.mjs';

export default async function globalSetup() {
  globalThis.__GATEHOUSE_TEST_ENV__ = await prepareTestEnvironment();
}
