// Jest global teardown: stops the embedded PostgreSQL the setup started, or drops this run's databases on an
// external server; nothing when an outer `npm test` owns the run.
export default async function globalTeardown() {
  const state = globalThis.__GATEHOUSE_TEST_ENV__;
  globalThis.__GATEHOUSE_TEST_ENV__ = undefined;
  await state?.cleanup();
}
