#!/usr/bin/env node
// The console's users list with many users: the time from pressing "Users" in the navigation until the first page
// of the list is shown with its total (the list usable), and until a search has narrowed it, in Debian's Chromium
// against running services (e.g. `npm start`). Each run is a fresh browser context signed in beforehand (nothing
// cached by TanStack Query). Target (issue 30): under 1 s with 100,000 users.
//
//   CONSOLE_URL       the console (default http://localhost:3003)
//   DATABASE_URL      the identity database: missing bench users are inserted there first (bench-<n>@example.test)
//   BENCH_USERS       how many bench users (default 100000)
//   ADMIN_EMAIL, ADMIN_PASSWORD   who signs in (an instance admin)
//   RUNS              measured runs (default 5)
import pg from 'pg';
import { chromium } from 'playwright-core';

const CONSOLE = (process.env.CONSOLE_URL ?? 'http://localhost:3003').replace(/\/$/, '');
const USERS = Number(process.env.BENCH_USERS ?? 100_000);
const RUNS = Number(process.env.RUNS ?? 5);
const admin = { email: process.env.ADMIN_EMAIL ?? '', password: process.env.ADMIN_PASSWORD ?? '' };

async function seed() {
  if (!process.env.DATABASE_URL) return;
  const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await c.connect();
  try {
    const { rows } = await c.query(
      `SELECT count(*)::int AS n FROM users WHERE user_email LIKE 'bench-%@example.test'`,
    );
    const missing = USERS - rows[0].n;
    if (missing > 0) {
      const started = Date.now();
      await c.query(
        `INSERT INTO users (instance_id, user_email, user_name, name)
         SELECT (SELECT id FROM instances WHERE is_default), 'bench-' || g || '@example.test', 'bench' || g,
                'Bench User ' || g
           FROM generate_series($1::int, $2::int) g`,
        [rows[0].n + 1, USERS],
      );
      await c.query('ANALYZE users');
      console.log(`inserted ${missing} bench users in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
    const total = await c.query('SELECT count(*)::int AS n FROM users');
    console.log(`users in the database: ${total.rows[0].n}`);
  } finally {
    await c.end();
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

await seed();
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
});
const list = [];
const search = [];
try {
  for (let i = 0; i < RUNS + 1; i++) {
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    await page.goto(`${CONSOLE}/`);
    await page.click('#sign-in');
    await page.fill('input[name="username"]', admin.email);
    await page.fill('input[name="password"]', admin.password);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#signed-in-as');
    await page.waitForLoadState('networkidle');
    let t0 = performance.now();
    await page.getByRole('navigation').getByRole('link', { name: 'Users' }).click();
    await page.waitForSelector('table tbody tr');
    // the pager's "1–10 of N", read in the page (a function, not a string: the console's CSP forbids eval)
    await page.waitForFunction(() =>
      /of \d/.test(/** @type {any} */ (globalThis).document.querySelector('.pager span')?.textContent ?? ''),
    );
    const shown = performance.now() - t0;
    t0 = performance.now();
    await page.getByLabel('Search').fill('bench-4242@');
    await page.waitForFunction(() =>
      / of 1$/.test(/** @type {any} */ (globalThis).document.querySelector('.pager span')?.textContent ?? ''),
    );
    const searched = performance.now() - t0;
    if (i > 0) {
      list.push(shown);
      search.push(searched);
    }
    await ctx.close();
  }
} finally {
  await browser.close();
}
console.log('| what | runs | median ms | min ms | max ms |');
console.log('| --- | --- | --- | --- | --- |');
/** @type {[string, number[]][]} */
const table = [
  ['Users pressed -> first page and total shown', list],
  ['search typed -> list narrowed (incl. 250 ms typing pause)', search],
];
for (const [what, xs] of table) {
  console.log(
    `| ${what} | ${xs.length} | ${median(xs).toFixed(0)} | ${Math.min(...xs).toFixed(0)} | ${Math.max(...xs).toFixed(0)} |`,
  );
}
