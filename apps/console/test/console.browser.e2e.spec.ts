// The admin console in a real browser (Debian's Chromium, playwright-core) against the real services, started as
// `npm start` starts them (tools/launcher/start.mjs, a fresh database on TEST_PG_URL's server): sign in as the
// bootstrap admin through the token server's pages; create a client and rotate its secret (the old one stops
// working); create a user and give it a role through a nested group, and see the effective permission and its
// source; create tenants and an admin of one, who then sees only that tenant and is told why a page is closed to
// them; sign out through the end-session endpoint; build a small tree, move a subtree, add a translation, export
// and import CSV. @axe-core/playwright on every page: no serious or critical
// violation. Screenshots of every page (English and Mongolian, light and dark) under test-artifacts/console/.
// CONSOLE_E2E_REUSE=<auth>,<identity>,<tree>,<console> ports: use services already running (development only).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import AxeBuilder from '@axe-core/playwright';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { jest } from '@jest/globals';
import { getFreePort, holdTestLock, type TestLock } from '@gatehouse/testing';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const shots = path.join(ROOT, 'test-artifacts', 'console');
const PG = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ADMIN = { email: `admin-${randomUUID().slice(0, 8)}@example.test`, password: 'Console-admin-pass-1' };
const reuse = process.env.CONSOLE_E2E_REUSE?.split(',').map(Number);
jest.setTimeout(240_000);

const dbUrl = (name: string) => {
  const u = new URL(PG);
  u.pathname = `/${name}`;
  return u.toString();
};

async function admin(sql: string) {
  const c = new pg.Client({ connectionString: PG });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

(available ? describe : describe.skip)('admin console in Chromium', () => {
  const db = `gh_console_e2e_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const ports = { auth: 0, identity: 0, tree: 0, console: 0 };
  let launcher: ChildProcess | undefined;
  let output = '';
  let distLock: TestLock | undefined;
  let dataDir: string | undefined;
  let browser: Browser;
  let credentials = ADMIN;
  const url = (p = '/') => `http://localhost:${ports.console}${p}`;
  const authUrl = () => `http://localhost:${ports.auth}`;

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    if (reuse) {
      [ports.auth, ports.identity, ports.tree, ports.console] = reuse;
      credentials = {
        email: process.env.BOOTSTRAP_ADMIN_EMAIL ?? '',
        password: process.env.BOOTSTRAP_ADMIN_PASSWORD ?? '',
      };
    } else {
      // the build (an Nx cache hit when nothing changed) must not run while other tests run services from dist/
      distLock = await holdTestLock('dist');
      const build = spawnSync('npx', ['nx', 'run-many', '-t', 'build', '-p', 'auth,identity,tree,console'], {
        cwd: ROOT,
        env: { ...process.env, NX_DAEMON: 'false', NODE_OPTIONS: '' },
        encoding: 'utf8',
      });
      if (build.status !== 0) throw new Error(`build failed:\n${build.stdout}\n${build.stderr}`);
      await admin(`CREATE DATABASE ${db}`);
      await admin(`CREATE DATABASE ${db}_tree`);
      for (const k of Object.keys(ports) as (keyof typeof ports)[]) ports[k] = await getFreePort();
      const env: NodeJS.ProcessEnv = { ...process.env };
      for (const v of ['ISSUER', 'AUTH_URL', 'CONSOLE_URL', 'CORS_ORIGINS', 'REDIS_URL', 'NODE_OPTIONS'])
        delete env[v];
      launcher = spawn(process.execPath, ['tools/launcher/start.mjs'], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          ...env,
          LAUNCHER_SKIP_BUILD: '1',
          DATA_DIR: (dataDir = mkdtempSync(path.join(os.tmpdir(), 'gh-console-e2e-'))),
          DATABASE_URL: dbUrl(db),
          TREE_DATABASE_URL: dbUrl(`${db}_tree`),
          AUTH_PORT: String(ports.auth),
          IDENTITY_PORT: String(ports.identity),
          TREE_PORT: String(ports.tree),
          CONSOLE_PORT: String(ports.console),
          BOOTSTRAP_ADMIN_EMAIL: ADMIN.email,
          BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
          LOG_LEVEL: 'warn',
        },
      });
      launcher.stdout?.on('data', (d: Buffer) => (output += d.toString()));
      launcher.stderr?.on('data', (d: Buffer) => (output += d.toString()));
      const deadline = Date.now() + 90_000;
      while (!output.includes('press Ctrl-C to stop')) {
        if (launcher.exitCode !== null) throw new Error(`launcher exited:\n${output}`);
        if (Date.now() > deadline) throw new Error(`services not ready:\n${output}`);
        await new Promise((r) => setTimeout(r, 250));
      }
      await distLock.release();
      distLock = undefined;
    }
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
      ],
    });
  }, 200_000);

  afterAll(async () => {
    await browser?.close();
    await distLock?.release();
    if (launcher && launcher.exitCode === null) {
      launcher.kill('SIGTERM');
      await new Promise((r) => launcher?.once('exit', r));
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (!reuse) {
      await admin(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`).catch(() => undefined);
      await admin(`DROP DATABASE IF EXISTS ${db}_tree WITH (FORCE)`).catch(() => undefined);
    }
  }, 60_000);

  /** No serious or critical accessibility violation on the page as it is now. */
  async function accessible(page: Page, name: string) {
    const result = await new AxeBuilder({ page }).analyze();
    const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect({
      page: name,
      violations: bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target).join(' ')}`),
    }).toEqual({ page: name, violations: [] });
  }

  const shot = (page: Page, name: string) =>
    page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });

  /** A new browser signed in as `who` (the token server's login page, then back to the console). */
  async function signIn(
    who: { email: string; password: string },
    o: { lang?: 'en' | 'mn'; dark?: boolean; name?: string } = {},
  ): Promise<{ ctx: BrowserContext; page: Page }> {
    const ctx = await browser.newContext({
      locale: o.lang === 'mn' ? 'mn-MN' : 'en-US',
      colorScheme: o.dark ? 'dark' : 'light',
      viewport: { width: 1280, height: 800 },
    });
    const page = await ctx.newPage();
    page.on('pageerror', (e) => {
      throw e;
    });
    await page.goto(url('/'));
    await page.waitForSelector('#sign-in');
    if (o.name) {
      await accessible(page, 'sign-in');
      await shot(page, `${o.name}-0-sign-in`);
    }
    await page.click('#sign-in');
    await page.waitForSelector('input[name="username"]');
    expect(page.url().startsWith(authUrl())).toBe(true);
    await page.fill('input[name="username"]', who.email);
    await page.fill('input[name="password"]', who.password);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#signed-in-as');
    expect(page.url()).toBe(url('/'));
    return { ctx, page };
  }

  /** Goes to a page by the navigation (as a user would), waits for its heading, checks it, takes its picture. */
  async function visit(page: Page, linkText: string | RegExp, shotName: string) {
    await page.getByRole('navigation').getByRole('link', { name: linkText }).click();
    await page.waitForSelector('main h1');
    await page.waitForLoadState('networkidle');
    await accessible(page, shotName);
    await shot(page, shotName);
  }

  /** Opens a row of the list on the current page, found through its search box. */
  async function openRow(page: Page, search: string) {
    await page.getByLabel(/^(Search|Хайх)$/).fill(search);
    await page.getByRole('table').getByRole('link', { name: search, exact: true }).click();
    await page.waitForSelector('main .back');
    await page.waitForLoadState('networkidle');
  }

  async function fillDialog(page: Page, opener: string, fields: Record<string, string>) {
    await page.click(opener);
    const dialog = page.locator('dialog[open]');
    for (const [label, value] of Object.entries(fields))
      await dialog.getByLabel(label, { exact: true }).fill(value);
    return dialog;
  }

  async function confirm(page: Page, opener: string) {
    await page.click(opener);
    await page.locator('dialog[open] [data-confirm]').click();
  }

  const suffix = randomUUID().slice(0, 6);

  it('lets only the console origin through CORS', async () => {
    const preflight = (port: number, origin: string) =>
      fetch(`http://127.0.0.1:${port}/api/v1/users`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
      });
    for (const port of [ports.identity, ports.tree]) {
      const ok = await preflight(port, url('').replace(/\/$/, ''));
      expect(ok.status).toBe(204);
      expect(ok.headers.get('access-control-allow-origin')).toBe(`http://localhost:${ports.console}`);
      const foreign = await preflight(port, 'https://evil.example');
      expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
      const get = await fetch(`http://127.0.0.1:${port}/api/v1/users`, {
        headers: { origin: 'https://evil.example' },
      });
      expect(get.headers.get('access-control-allow-origin')).toBeNull();
    }
    const config = (await (await fetch(url('/config.json'))).json()) as { clientId: string };
    const token = (origin: string) =>
      fetch(`${authUrl()}/token`, {
        method: 'POST',
        headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          client_id: config.clientId,
          refresh_token: 'x',
        }),
      });
    expect(
      (await token(`http://localhost:${ports.console}`)).headers.get('access-control-allow-origin'),
    ).toBe(`http://localhost:${ports.console}`);
    expect((await token('https://evil.example')).headers.get('access-control-allow-origin')).toBeNull();
  });

  it('signs the bootstrap admin in, creates a client and rotates its secret', async () => {
    const { ctx, page } = await signIn(credentials, { name: 'en' });
    await page.waitForSelector('[data-count="clients"]');
    await page.waitForLoadState('networkidle');
    expect(Number(await page.textContent('[data-count="clients"]'))).toBeGreaterThanOrEqual(3);
    await accessible(page, 'dashboard');
    await shot(page, 'en-1-dashboard');
    // keyboard: the first Tab reaches the skip link, which moves the focus to the page's content
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.className)).toBe('skip');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');

    await visit(page, 'Clients', 'en-2-clients');
    const name = `Billing ${suffix}`;
    const dialog = await fillDialog(page, '#new-client', {
      'Client name': name,
      Description: 'Monthly invoices',
    });
    await accessible(page, 'client-create');
    await shot(page, 'en-3-client-create');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await page.waitForSelector('#client-secret');
    const first = (await page.textContent('#client-secret')) ?? '';
    expect(first.length).toBeGreaterThan(20);
    await shot(page, 'en-4-client-secret-once');
    const clientId = (await page.locator('#secret-once code').first().textContent()) ?? '';
    await page.locator('dialog[open]').getByRole('button', { name: 'Back' }).click();

    await openRow(page, name);
    await accessible(page, 'client');
    await confirm(page, '#rotate-secret');
    await page.waitForSelector('#client-secret');
    const second = (await page.textContent('#client-secret')) ?? '';
    expect(second).not.toBe(first);
    await shot(page, 'en-5-client-rotated');
    // the old secret stops working at once, the new one authenticates
    const basic = (secret: string) =>
      fetch(`${authUrl()}/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials&audience=urn:gatehouse:management',
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error?: string } }));
    expect((await basic(first)).body.error).toBe('invalid_client');
    expect((await basic(second)).body.error).not.toBe('invalid_client');
    await ctx.close();
  });

  it('gives a user a role through a nested group and shows the effective permission with its source', async () => {
    const { ctx, page } = await signIn(credentials);
    const email = `ann-${suffix}@example.test`;
    const [role, parent, child] = [`Auditors ${suffix}`, `Finance ${suffix}`, `Payroll ${suffix}`];

    await visit(page, 'Roles', 'en-6-roles');
    let d = await fillDialog(page, '#new-role', { Name: role });
    await d.getByRole('button', { name: 'Create' }).click();
    await page.waitForSelector('main .back');
    await page.getByLabel('Grant').selectOption({ label: 'users:read (Gatehouse management API)' });
    await page.getByRole('button', { name: 'Add', exact: true }).first().click();
    await page.waitForSelector('text=users:read (Gatehouse management API)');
    await page.waitForLoadState('networkidle');
    await accessible(page, 'role');
    await shot(page, 'en-7-role');

    await visit(page, 'Groups', 'en-8-groups-empty');
    for (const g of [parent, child]) {
      d = await fillDialog(page, '#new-group', { Name: g });
      await d.getByRole('button', { name: 'Create' }).click();
      await page.waitForSelector('main .back');
      await page.getByRole('link', { name: '← Groups' }).click();
      await page.waitForSelector('#new-group');
    }
    // the parent: the child nested under it, the role on it
    await openRow(page, parent);
    await page.getByLabel('Add nested group').selectOption({ label: child });
    await page.locator('form.inline-add').first().getByRole('button', { name: 'Add' }).click();
    await page.waitForSelector(`.link-list >> text=${child}`);
    await page.getByLabel('Add a role').selectOption({ label: role });
    await page.locator('form.inline-add').nth(1).getByRole('button', { name: 'Add' }).click();
    await page.waitForSelector(`.link-list >> text=${role}`);
    await page.waitForLoadState('networkidle');
    await accessible(page, 'group');
    await shot(page, 'en-9-group');
    // a cycle is refused with the API's message
    await page.getByRole('link', { name: child }).first().click();
    await page.waitForSelector(`main h1:has-text("${child}")`);
    await page.getByLabel('Add nested group').selectOption({ label: parent });
    await page.locator('form.inline-add').first().getByRole('button', { name: 'Add' }).click();
    const alert = page.locator('main .alert[data-status="409"]');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/cycle|ancestor|descendant|itself/i);
    await shot(page, 'en-10-group-cycle-refused');

    await visit(page, 'Users', 'en-11-users');
    d = await fillDialog(page, '#new-user', {
      'E-mail': email,
      Name: 'Ann Example',
      Password: 'Ann-pass-123456',
    });
    await d.getByRole('button', { name: 'Create' }).click();
    await page.waitForSelector('main .back');
    await page.getByLabel('Add to a group').selectOption({ label: child });
    await page.locator('section.linked', { hasText: 'Groups' }).getByRole('button', { name: 'Add' }).click();
    const row = page.locator('#effective-permissions tr', { hasText: 'users:read' });
    await row.waitFor();
    expect(await row.textContent()).toContain(`role ${role} of group ${parent}`);
    await page.waitForLoadState('networkidle');
    await accessible(page, 'user');
    await shot(page, 'en-12-user-effective-permissions');

    // block asks first; then the user is blocked
    await confirm(page, '#block-user');
    await page.waitForSelector('#user-status:has-text("Blocked")');
    await ctx.close();
  });

  it('lets a tenant admin see only their tenant, explains a closed page, and signs out', async () => {
    const { ctx, page } = await signIn(credentials);
    const [mine, other] = [`Ulaanbaatar ${suffix}`, `Darkhan ${suffix}`];
    const tenantAdmin = { email: `bold-${suffix}@example.test`, password: 'Bold-pass-123456' };
    await visit(page, 'Users', 'en-13-users');
    const d0 = await fillDialog(page, '#new-user', {
      'E-mail': tenantAdmin.email,
      Password: tenantAdmin.password,
    });
    await d0.getByRole('button', { name: 'Create' }).click();
    await page.waitForSelector('main .back');
    await visit(page, 'Tenants', 'en-14-tenants');
    for (const t of [other, mine]) {
      const d = await fillDialog(page, '#new-tenant', { Name: t });
      await d.getByRole('button', { name: 'Create' }).click();
      await page.waitForSelector('main .back');
      if (t === other) {
        await page.getByRole('link', { name: '← Tenants' }).click();
        await page.waitForSelector('#new-tenant');
      }
    }
    await page.getByLabel('Add administrator').selectOption({ label: tenantAdmin.email });
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.waitForSelector(`.link-list >> text=${tenantAdmin.email}`);
    await page.waitForLoadState('networkidle');
    await accessible(page, 'tenant');
    await shot(page, 'en-15-tenant-admins');
    await visit(page, 'Resources', 'en-16-resources');
    await openRow(page, 'Gatehouse management API');
    expect(await page.locator('table code', { hasText: 'users:read' }).count()).toBe(1);
    // a system resource: its identifier shown, and neither it nor its scopes offered for deletion (the API: 403)
    expect(await page.textContent('main .meta')).toContain('urn:gatehouse:management');
    expect(await page.locator('main button', { hasText: 'Delete' }).count()).toBe(0);
    expect(await page.locator('main button', { hasText: 'New scope' }).count()).toBe(0);
    await accessible(page, 'resource');
    await shot(page, 'en-16b-resource-scopes');
    await visit(page, 'Tickets', 'en-17-tickets');
    await page.getByLabel('User', { exact: true }).selectOption({ label: tenantAdmin.email });
    await page.getByRole('button', { name: 'Make ticket' }).click();
    expect(await (await page.waitForSelector('#ticket-link')).textContent()).toContain(authUrl());
    await shot(page, 'en-17b-ticket-made');
    // single-instance mode: the API answers 501 and the console does not offer the section
    expect(await page.getByRole('navigation').getByRole('link', { name: 'Instances' }).count()).toBe(0);
    await page.goto(url('/instances'));
    await page.waitForSelector('main [data-status="501"]');
    await accessible(page, 'instances');
    await shot(page, 'en-18-instances');
    await visit(page, 'Trees', 'en-19-trees');

    // sign out through the token server's end-session page, back to the console's sign-in
    await page.click('#sign-out');
    await page.waitForSelector('button[name="logout"]');
    expect(page.url().startsWith(`${authUrl()}/session/end`)).toBe(true);
    await page.click('button[name="logout"]');
    await page.waitForSelector('#sign-in');
    expect(page.url()).toBe(url('/'));
    await ctx.close();

    const t = await signIn(tenantAdmin);
    const nav = t.page.getByRole('navigation');
    await nav.getByRole('link', { name: 'Tenants' }).click();
    await t.page.waitForSelector(`table >> text=${mine}`);
    await t.page.waitForLoadState('networkidle');
    const names = await t.page.locator('table tbody tr td:first-child').allTextContents();
    expect(names).toEqual([mine]);
    await shot(t.page, 'en-20-tenant-admin-tenants');
    // what the tenant admin's roles do not allow is not offered, and a 403 is explained
    expect(await nav.getByRole('link', { name: 'Instances' }).count()).toBe(0);
    expect(await nav.getByRole('link', { name: 'Trees' }).count()).toBe(0);
    await t.page.goto(url('/instances'));
    await t.page.waitForSelector('main [data-status="403"]');
    expect(await t.page.textContent('main [data-status="403"]')).toContain('instances:read');
    await accessible(t.page, 'forbidden');
    await shot(t.page, 'en-21-tenant-admin-forbidden');
    await t.ctx.close();
  });

  // The tree manager's pages: tree.browser.e2e.spec.ts (a tree built, a subtree moved by the dialog and by drag
  // and drop, a translation, CSV import and export, deep links).

  it('shows every page in Mongolian, and in dark mode', async () => {
    for (const [lang, dark] of [
      ['mn', false],
      ['en', true],
    ] as const) {
      const prefix = `${lang}${dark ? '-dark' : ''}`;
      const { ctx, page } = await signIn(credentials, { lang, dark, name: prefix });
      await page.waitForLoadState('networkidle');
      await accessible(page, `${prefix} dashboard`);
      await shot(page, `${prefix}-1-dashboard`);
      const sections =
        lang === 'mn'
          ? [
              'Клиентүүд',
              'Нөөцүүд',
              'Хэрэглэгчид',
              'Үүргүүд',
              'Бүлгүүд',
              'Байгууллагууд',
              'Тасалбарууд',
              'Модууд',
            ]
          : ['Clients', 'Users', 'Groups', 'Trees'];
      for (const [i, s] of sections.entries()) await visit(page, s, `${prefix}-${i + 2}-${s}`);
      if (lang === 'mn') expect(await page.getAttribute('html', 'lang')).toBe('mn');
      await ctx.close();
    }
  });
});
