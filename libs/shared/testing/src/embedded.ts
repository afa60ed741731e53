// The embedded PostgreSQL wrapper lives in one place, as plain ESM, because the launcher runs it uncompiled.
export {
  getFreePort,
  isPortFree,
  randomPassword,
  startEmbeddedPostgres,
  stopEmbeddedPostgres,
} from '../../../../tools/launcher/embedded-pg.mjs';
export type {
  EmbeddedPostgresHandle,
  StartEmbeddedPostgresOptions,
} from '../../../../tools/launcher/embedded-pg.mjs';
