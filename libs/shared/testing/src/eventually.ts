import { setTimeout as sleep } from 'node:timers/promises';

export interface EventuallyOptions {
  /** Give up after this long (default 3000 ms). */
  timeoutMs?: number;
  /** Wait this long between two checks (default 20 ms). */
  intervalMs?: number;
  /** What did not happen, for the error. */
  what?: string;
}

/**
 * Resolves as soon as `check` answers true (checked at once, then every `intervalMs`); throws after `timeoutMs`.
 * For what another process or connection does in its own time (a notification, a lock released, a log line
 * written): the test waits exactly as long as needed instead of a fixed sleep.
 */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  opts: EventuallyOptions = {},
): Promise<void> {
  const until = Date.now() + (opts.timeoutMs ?? 3000);
  for (;;) {
    if (await check()) return;
    if (Date.now() > until) {
      throw new Error(`${opts.what ?? 'the condition'} did not happen within ${opts.timeoutMs ?? 3000} ms`);
    }
    await sleep(opts.intervalMs ?? 20);
  }
}
