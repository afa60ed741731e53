import type { IncomingMessage } from 'node:http';
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Sql } from '@gatehouse/db';
import { sourceOf } from '../events/auth-events.js';

/** The part of a user agent kept (the events' limit). */
const MAX_USER_AGENT = 512;

/** A browser and an operating system as the sessions list names them; null where the user agent does not tell. */
export interface Device {
  browser: string | null;
  os: string | null;
}

// first match wins: Edge and Opera say "Chrome" too, Chrome says "Safari", every iOS browser says "Safari"
const BROWSERS: [RegExp, string][] = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\b(?:OPR|Opera)\//, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\b(?:Firefox|FxiOS)\//, 'Firefox'],
  [/\b(?:HeadlessChrome|Chrome|CriOS)\//, 'Chrome'],
  [/\bChromium\//, 'Chromium'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
  [/\bcurl\//, 'curl'],
];
const SYSTEMS: [RegExp, string][] = [
  [/\bWindows (?:NT|Phone)\b/, 'Windows'],
  [/\b(?:iPhone|iPod)\b/, 'iOS'],
  [/\biPad\b/, 'iPadOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b|\bX11\b/, 'Linux'],
];

/**
 * The browser and the operating system a user agent names, by a few patterns (no parser library: the list only
 * helps a person recognise their devices, and a user agent is whatever the browser chose to send).
 */
export function deviceOf(userAgent: string | null | undefined): Device {
  const ua = userAgent ?? '';
  return {
    browser: BROWSERS.find(([re]) => re.test(ua))?.[1] ?? null,
    os: SYSTEMS.find(([re]) => re.test(ua))?.[1] ?? null,
  };
}

/**
 * Records that the session `uid` of `userId` was used now from the request's browser: its user agent and source
 * address (as the trusted-proxy rule resolves it) replace the ones kept. The uid is oidc-provider's, never the
 * request's, so a row is only ever taken over by the session's own next sign-in.
 */
export async function touchSessionDevice(
  sql: Sql,
  o: { uid: string; userId: string; req: IncomingMessage | undefined; at?: Date },
): Promise<void> {
  const source = sourceOf(o.req);
  await sql.exec(
    `INSERT INTO session_devices (session_uid, instance_id, user_id, user_agent, ip, created_at, last_seen_at)
     SELECT $1, u.instance_id, u.id, $3, $4, $5, $5 FROM users u WHERE u.id = $2
     ON CONFLICT (session_uid) DO UPDATE
       SET user_agent = excluded.user_agent, ip = excluded.ip, last_seen_at = excluded.last_seen_at,
           -- the browser's session now signs in another person: the row is theirs from now on
           created_at = CASE WHEN session_devices.user_id = excluded.user_id THEN session_devices.created_at
                             ELSE excluded.created_at END,
           user_id = excluded.user_id, instance_id = excluded.instance_id`,
    [o.uid, o.userId, source.userAgent?.slice(0, MAX_USER_AGENT) ?? null, source.ip, o.at ?? new Date()],
  );
}

/**
 * Every successful authorization through a session (the sign-in that made it among them, a later single sign-on
 * at another application, the device flow's approval) touches that session's device. Written after the answer
 * (the request does not wait); a failure is only logged.
 */
export function trackSessionDevices(
  provider: Provider,
  sql: Sql,
  onError: (err: unknown) => void,
  touches = new DeviceTouches(),
): void {
  provider.on('authorization.success', (ctx: KoaContextWithOIDC) => {
    const session = ctx.oidc.session as { uid?: string; accountId?: string } | undefined;
    if (!session?.uid || !session.accountId) return;
    const source = sourceOf(ctx.req);
    if (!touches.due(session.uid, `${session.accountId} ${source.ip} ${source.userAgent ?? ''}`)) return;
    touchSessionDevice(sql, { uid: session.uid, userId: session.accountId, req: ctx.req }).catch((err) => {
      touches.forget(session.uid!);
      onError(err);
    });
  });
}

/**
 * Which authorizations write their session's device row: the first of a session in this process, one whose user,
 * address or user agent differs from the last one written, and otherwise one a minute (`intervalMs`). Every single
 * sign-on at an application is an authorization, and a row per authorization would be a write on the hot path of a
 * returning user for a "last used" the sessions list shows to the minute. At most `max` sessions are remembered
 * (then the memory starts again: a session seen again is written once more).
 */
export class DeviceTouches {
  private readonly last = new Map<string, { key: string; at: number }>();

  constructor(
    private readonly intervalMs = 60_000,
    private readonly max = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether session `uid`, used now as `key` (its user, address and user agent), is to be written. */
  due(uid: string, key: string): boolean {
    const now = this.now();
    const seen = this.last.get(uid);
    if (seen && seen.key === key && now - seen.at < this.intervalMs) return false;
    if (!seen && this.last.size >= this.max) this.last.clear();
    this.last.set(uid, { key, at: now });
    return true;
  }

  /** A write that failed: the next authorization of the session writes again. */
  forget(uid: string): void {
    this.last.delete(uid);
  }
}

/** Devices whose session is gone (signed out, expired, ended elsewhere) and that were not seen for an hour. */
export function purgeSessionDevices(sql: Sql): Promise<number> {
  return sql.exec(
    `DELETE FROM session_devices d
      WHERE d.last_seen_at < now() - interval '1 hour'
        AND NOT EXISTS (SELECT 1 FROM oidc_payloads p WHERE p.model = 'Session' AND p.uid = d.session_uid)`,
  );
}
