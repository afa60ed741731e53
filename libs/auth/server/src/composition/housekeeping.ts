import type { Logger } from 'pino';
import { STALE_SUBSCRIBER_SEC } from '@gatehouse/changes';
import type { Sql } from '@gatehouse/db';
import { purgeLoginFailures, purgeTickets } from '@gatehouse/identity-data';
import { purgeExpiredPayloads } from '../oidc/adapters/pg.adapter.js';
import { purgeSessionDevices } from '../account/session-devices.js';
import type { OneTimeCodes } from '../passwordless/one-time-codes.js';
import type { Signup } from '../signup/signup.js';
import type { SecondFactors } from '../mfa/second-factors.js';
import type { TokenServerEnv } from './token-server-env.js';

export interface HousekeepingDeps {
  env: Pick<TokenServerEnv, 'AUTH_PURGE_INTERVAL_SEC' | 'AUTH_KEY_REFRESH_SEC'>;
  sql: Sql;
  log: Logger;
  codes: OneTimeCodes;
  signup: Signup;
  /** Second factors: their failure counts and unconfirmed enrolments are purged. */
  mfa?: SecondFactors;
  /** Reload the signing keys when another process rotated them. */
  reloadKeys: () => Promise<unknown>;
}

/**
 * The token server's timers: expired artifacts purged (oidc-provider's, one-time codes, sign-up counters, tickets,
 * login failure counts, cache subscribers of killed processes) every AUTH_PURGE_INTERVAL_SEC, and the signing keys
 * checked for a rotation every AUTH_KEY_REFRESH_SEC. None keeps the process alive; clear them at shutdown.
 */
export function scheduleHousekeeping(deps: HousekeepingDeps): NodeJS.Timeout[] {
  const { env, log } = deps;
  const timers: NodeJS.Timeout[] = [];
  const every = (sec: number, fn: () => Promise<unknown>) => {
    const t = setInterval(() => {
      fn().catch((err: unknown) =>
        log.warn({ err: (err as Error).message }, 'token server housekeeping failed'),
      );
    }, sec * 1000);
    t.unref();
    timers.push(t);
  };
  every(env.AUTH_PURGE_INTERVAL_SEC, () => purgeExpired(deps));
  every(env.AUTH_KEY_REFRESH_SEC, deps.reloadKeys);
  return timers;
}

async function purgeExpired({ sql, log, codes, signup, mfa }: HousekeepingDeps): Promise<void> {
  const n = await purgeExpiredPayloads(sql);
  if (n) log.debug({ removed: n }, 'expired oidc artifacts purged');
  await codes.purge();
  await mfa?.purge();
  await signup.purgeCounters();
  await purgeTickets(sql);
  const f = await purgeLoginFailures(sql);
  if (f) log.debug({ removed: f }, 'stale login failure counts purged');
  await purgeSessionDevices(sql);
  // cache subscribers that stopped without deleting their row (a killed process)
  await sql.exec(`DELETE FROM cache_subscribers WHERE heartbeat_at < now() - make_interval(secs => $1)`, [
    STALE_SUBSCRIBER_SEC,
  ]);
}
