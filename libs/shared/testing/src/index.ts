export {
  createEmptyTestDatabase,
  createTestDatabase,
  testAdminUrl,
  testRedisUrl,
  withDatabase,
  type CreateTestDatabaseOptions,
  type TestDatabase,
} from './test-database.js';
export { holdTestLock, type TestLock } from './test-lock.js';
export {
  getFreePort,
  isPortFree,
  randomPassword,
  startEmbeddedPostgres,
  stopEmbeddedPostgres,
  type EmbeddedPostgresHandle,
  type StartEmbeddedPostgresOptions,
} from './embedded-pg.mjs';
export { eventually, type EventuallyOptions } from './eventually.js';
export { smtpSink, type SunkMail } from './smtp-sink.js';
export { smsSink, type SunkText } from './sms-sink.js';
export { LocalIssuer } from './local-issuer.js';
export { REPO_ROOT, scratchDir, swcBuild } from './swc-build.js';
