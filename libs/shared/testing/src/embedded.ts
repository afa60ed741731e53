// The embedded PostgreSQL wrapper lives in one place, tools/launcher/embedded-pg.mjs, as plain ESM because the
// launcher runs it uncompiled; tools/ is no Nx project, so there is no alias to import it by.
// eslint-disable-next-line @nx/enforce-module-boundaries
export {
  getFreePort,
  isPortFree,
  randomPassword,
  startEmbeddedPostgres,
  stopEmbeddedPostgres,
} from '../../../../tools/launcher/embedded-pg.mjs';
// eslint-disable-next-line @nx/enforce-module-boundaries
export type {
  EmbeddedPostgresHandle,
  StartEmbeddedPostgresOptions,
} from '../../../../tools/launcher/embedded-pg.mjs';
