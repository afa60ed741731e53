import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { TestUser } from './fixtures.js';

/** Debian's Chromium (or CHROMIUM_PATH); the browser tests are skipped without it. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumAvailable = existsSync(CHROMIUM);

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../..');
/** Where the browser tests keep their screenshots (artifacts of the run). */
export const SHOTS = path.join(root, 'test-artifacts', 'browser');

/** Chromium headless, as the browser tests run it (no sandbox in a container, no background traffic). */
export function launchChromium(): Promise<Browser> {
  mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
}

/** A full-page screenshot `<name>.png` under {@link SHOTS}. */
export function shot(page: Page, name: string): Promise<Buffer> {
  return page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/**
 * A fresh browser (in `lang`, with `userAgent` when given) at `<url>/account`: sent to the sign-in page (a
 * screenshot `shotName` of it when given), signs in with the password, comes back to the account page, whose URL
 * no longer carries the authorization response.
 */
export async function signInAtAccount(
  browser: Browser,
  url: string,
  user: TestUser,
  lang: 'en' | 'mn',
  opts: { password?: string; userAgent?: string; shotName?: string } = {},
): Promise<{ ctx: BrowserContext; page: Page }> {
  const ctx = await browser.newContext({
    locale: lang === 'mn' ? 'mn-MN' : 'en-US',
    userAgent: opts.userAgent,
  });
  const page = await ctx.newPage();
  await page.goto(`${url}/account`);
  await page.waitForSelector('input[name="username"]');
  expect(new URL(page.url()).pathname).toMatch(/^\/interaction\//);
  if (opts.shotName) await shot(page, opts.shotName);
  await page.fill('input[name="username"]', user.email);
  await page.fill('input[name="password"]', opts.password ?? user.password);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#signed-in-as');
  expect(page.url()).toBe(`${url}/account`);
  return { ctx, page };
}
