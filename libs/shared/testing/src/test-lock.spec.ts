import { randomBytes } from 'node:crypto';
import { holdTestLock } from './test-lock.js';

/** Resolves with 'acquired' when `p` settles first, 'waiting' when `ms` pass before. */
async function within(p: Promise<unknown>, ms: number): Promise<'acquired' | 'waiting'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p.then(() => 'acquired' as const),
      new Promise<'waiting'>((r) => {
        timer = setTimeout(() => r('waiting'), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

describe('holdTestLock', () => {
  const name = () => `spec_${randomBytes(4).toString('hex')}`;

  it('makes a second holder wait until the first releases', async () => {
    const n = name();
    const first = await holdTestLock(n);
    const second = holdTestLock(n);
    expect(await within(second, 300)).toBe('waiting');
    await first.release();
    expect(await within(second, 10_000)).toBe('acquired');
    await (await second).release();
  });

  it('lets shared holders in together and keeps an exclusive one out until they are gone', async () => {
    const n = name();
    const a = await holdTestLock(n, { shared: true });
    const b = await holdTestLock(n, { shared: true });
    const exclusive = holdTestLock(n);
    expect(await within(exclusive, 300)).toBe('waiting');
    await a.release();
    expect(await within(exclusive, 300)).toBe('waiting');
    await b.release();
    await b.release(); // idempotent
    expect(await within(exclusive, 10_000)).toBe('acquired');
    await (await exclusive).release();
  });
});
