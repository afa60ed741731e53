// The console's tree manager pages in a real browser (Debian's Chromium, playwright-core) against the real services,
// started as `npm start` starts them (support/services.ts): sign in as the bootstrap admin; create a tree, a
// version, clone it and change the clone's code; build nodes; move a subtree with the "Move to" dialog and by drag
// and drop, see a move under its own descendant refused with the API's message; walk the tree with the keyboard;
// add a translation and see it; export CSV, import it into another version and export that: the same content;
// delete a subtree after being told its size; open a deep node by its link. @axe-core/playwright on every tree
// page: no serious or critical violation. Screenshots (English and Mongolian) under test-artifacts/console/tree-*.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import AxeBuilder from '@axe-core/playwright';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { jest } from '@jest/globals';
import { ROOT, startServices, type Services } from './support/services.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
const shots = path.join(ROOT, 'test-artifacts', 'console');
jest.setTimeout(240_000);

(available ? describe : describe.skip)('tree manager pages in Chromium', () => {
  let s: Services;
  let browser: Browser;
  const code = `coa-${randomUUID().slice(0, 6)}`;

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    s = await startServices();
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
    await s?.stop();
  }, 60_000);

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
  /** Checked and pictured, once the page has settled. */
  async function look(page: Page, name: string) {
    await page.waitForLoadState('networkidle');
    await accessible(page, name);
    await shot(page, name);
  }

  async function signIn(lang: 'en' | 'mn' = 'en'): Promise<{ ctx: BrowserContext; page: Page }> {
    const ctx = await browser.newContext({
      locale: lang === 'mn' ? 'mn-MN' : 'en-US',
      viewport: { width: 1280, height: 900 },
      acceptDownloads: true,
    });
    const page = await ctx.newPage();
    page.on('pageerror', (e) => {
      throw e;
    });
    await page.goto(s.console('/'));
    await page.click('#sign-in');
    await page.waitForSelector('input[name="username"]');
    await page.fill('input[name="username"]', s.admin.email);
    await page.fill('input[name="password"]', s.admin.password);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#signed-in-as');
    return { ctx, page };
  }

  async function dialog(page: Page, opener: string, fields: Record<string, string>, submit: string) {
    await page.click(opener);
    const d = page.locator('dialog[open]');
    for (const [label, value] of Object.entries(fields))
      await d.getByLabel(label, { exact: true }).fill(value);
    await d.getByRole('button', { name: submit, exact: true }).click();
    return d;
  }

  const row = (page: Page, nodeCode: string) => page.locator(`#node-tree [data-code="${nodeCode}"]`);
  /** Selects a node by its row and waits for its panel. */
  async function select(page: Page, nodeCode: string) {
    await row(page, nodeCode).click();
    await page.waitForSelector(`#node-panel #node-code:text-is("${nodeCode}")`);
  }
  async function addChild(page: Page, parent: string, child: string, name: string) {
    await select(page, parent);
    await dialog(page, '#add-child', { 'Node code': child, Name: name }, 'Create');
    await page.waitForSelector('dialog[open]', { state: 'detached' }).catch(() => undefined);
    await row(page, child).waitFor();
  }
  const levelOf = async (page: Page, nodeCode: string) =>
    Number(await row(page, nodeCode).getAttribute('aria-level'));

  async function exportCsv(page: Page): Promise<string> {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#csv-export')]);
    const file = await download.path();
    return readFileSync(file, 'utf8');
  }

  it('builds a tree, moves a subtree, translates, imports and exports CSV', async () => {
    const { ctx, page } = await signIn('en');
    // ---- the trees list, a new tree
    await page.getByRole('navigation').getByRole('link', { name: 'Trees' }).click();
    await page.waitForSelector('main h1:text-is("Trees")');
    await look(page, 'tree-en-1-trees');
    await dialog(page, '#new-tree', { Code: code, Name: 'Chart of accounts' }, 'Create');
    await page.waitForSelector('main h1:text-is("Chart of accounts")');
    await page.waitForSelector('#versions-table [data-version="v1"]');

    // ---- versions: create, clone, change the clone's code
    await dialog(page, '#new-version', { 'Version code': 'v2', Name: 'Import target' }, 'Create');
    await page.waitForSelector('#versions-table [data-version="v2"]');
    await page.locator('[data-version="v2"]').getByRole('button', { name: 'Clone' }).click();
    let d = page.locator('dialog[open]');
    await d.getByLabel('Version code', { exact: true }).fill('v3');
    await d.getByRole('button', { name: 'Clone', exact: true }).click();
    await page.waitForSelector('#versions-table [data-version="v3"]');
    await page.locator('[data-version="v3"]').getByRole('button', { name: 'Change code' }).click();
    d = page.locator('dialog[open]');
    await d.getByLabel('New version code', { exact: true }).fill('v3b');
    await d.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForSelector('#versions-table [data-version="v3b"]');
    expect(await page.locator('#versions-table [data-version="v3"]').count()).toBe(0);
    await look(page, 'tree-en-2-tree');

    // ---- the node tree of v1: its root (coded as the tree), children under it
    await page.locator('#versions-table').getByRole('link', { name: 'v1', exact: true }).click();
    await row(page, code).waitFor();
    await addChild(page, code, 'A', 'Assets');
    await addChild(page, code, 'B', 'Liabilities');
    await addChild(page, 'A', 'A1', 'Cash');
    expect(await levelOf(page, 'A1')).toBe(3);

    // ---- move A (with A1) under B through the dialog
    await select(page, 'A');
    await page.click('#move-node');
    d = page.locator('#move-dialog');
    await d.getByLabel('Find the new parent (code or name)').fill('Liab');
    await d.getByRole('radio', { name: /Liabilities/ }).check();
    await shot(page, 'tree-en-4-move-dialog');
    await d.getByRole('button', { name: 'Move', exact: true }).click();
    await d.waitFor({ state: 'hidden' });
    await page.waitForFunction(() => {
      const a = document.querySelector('#node-tree [data-code="A"]');
      return a?.getAttribute('aria-level') === '3';
    });
    await row(page, 'A1').waitFor();
    expect(await levelOf(page, 'A1')).toBe(4);

    // ---- a move under its own descendant: the API's 409 and message shown in the dialog
    await select(page, 'B');
    await page.click('#move-node');
    d = page.locator('#move-dialog');
    await d.getByLabel('Find the new parent (code or name)').fill('Cash');
    await d.getByRole('radio', { name: /Cash/ }).check();
    await d.getByRole('button', { name: 'Move', exact: true }).click();
    const alert = d.locator('[role="alert"]');
    await alert.waitFor();
    expect(await alert.getAttribute('data-status')).toBe('409');
    expect((await alert.textContent())?.toLowerCase()).toMatch(/descendant|itself|subtree|own/);
    await shot(page, 'tree-en-5-move-refused');
    await d.getByRole('button', { name: 'Cancel' }).click();

    // ---- drag and drop: A1 onto the root
    await row(page, 'A1').dragTo(row(page, code));
    await page.waitForFunction(() => {
      const a = document.querySelector('#node-tree [data-code="A1"]');
      return a?.getAttribute('aria-level') === '2';
    });

    // ---- the keyboard: Home, ArrowDown, ArrowLeft collapses, ArrowRight expands then enters, Enter selects
    const focused = () => page.evaluate(() => document.activeElement?.getAttribute('data-code'));
    const expandedOf = (c: string) => row(page, c).getAttribute('aria-expanded');
    await row(page, 'A1').focus();
    await page.keyboard.press('Home');
    expect(await focused()).toBe(code);
    await page.keyboard.press('ArrowDown');
    expect(await focused()).toBe('B');
    expect(await expandedOf('B')).toBe('true');
    await page.keyboard.press('ArrowLeft');
    await page.waitForFunction(() => !document.querySelector('#node-tree [data-code="A"]'));
    expect(await expandedOf('B')).toBe('false');
    await page.keyboard.press('ArrowRight');
    await row(page, 'A').waitFor();
    await page.keyboard.press('ArrowRight');
    expect(await focused()).toBe('A');
    await page.keyboard.press('ArrowLeft');
    expect(await focused()).toBe('B');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#node-panel #node-code:text-is("A")');

    // ---- a translation, added and seen
    await select(page, 'A1');
    const mn = page.locator('.translation[data-lang="mn_MN"]');
    await mn.getByLabel('Name').fill('Бэлэн мөнгө');
    await mn.getByRole('button', { name: 'Add' }).click();
    await mn.getByRole('button', { name: 'Save' }).waitFor();
    expect(await mn.getByLabel('Name').inputValue()).toBe('Бэлэн мөнгө');
    const a1Id = await page.locator('#node-panel').getAttribute('data-node');
    // the console's own link to a node names its ancestors (a link that opens without walking up the tree)
    const a1Link = new URL(page.url());
    expect(a1Link.searchParams.get('node')).toBe(a1Id);
    expect(a1Link.searchParams.get('path')).toMatch(/^[0-9a-f-]{36}$/);
    await look(page, 'tree-en-3-version');

    // ---- CSV: export v1, import it into v2 (replacing its root), export v2: the same lines
    const v1Csv = await exportCsv(page);
    expect(v1Csv.split(/\r?\n/)[0]).toBe('code,parent_code,name,description,name@mn_MN,description@mn_MN');
    expect(v1Csv).toContain('A1,' + code + ',Cash,,Бэлэн мөнгө,');
    expect(v1Csv).toMatch(/\nA,B,Assets,/);
    await page.goto(s.console(`/trees/${code}/versions/v2`));
    await page.waitForSelector('#csv-import-form');
    await page.setInputFiles('#csv-import-form input[type="file"]', {
      name: 'v1.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(v1Csv, 'utf8'),
    });
    await page.getByLabel(/Replace the version/).check();
    await page.click('#csv-import');
    await page.waitForSelector('#csv-result');
    expect(await page.locator('progress').getAttribute('value')).toBe('100');
    expect(await page.textContent('#csv-result')).toContain('4 node(s) imported');
    await row(page, code).waitFor();
    await look(page, 'tree-en-6-imported');
    const v2Csv = await exportCsv(page);
    expect(v2Csv).toBe(v1Csv);

    // ---- delete a subtree: its size told first
    await page.goto(s.console(`/trees/${code}/versions/v1`));
    await select(page, 'B');
    await page.click('#delete-node');
    await page.waitForSelector('#delete-node-question');
    expect(await page.textContent('#delete-node-question')).toContain('the 1 node(s) below it');
    await shot(page, 'tree-en-7-delete-subtree');
    await page.locator('#delete-node-dialog [data-confirm]').click();
    await row(page, 'B').waitFor({ state: 'detached' });
    expect(await row(page, 'A').count()).toBe(0);
    await ctx.close();

    // ---- Mongolian: every tree page, a deep node opened by its link (its ancestors' levels only)
    const m = await signIn('mn');
    await m.page.goto(s.console('/trees'));
    await m.page.waitForSelector('main h1:text-is("Модууд")');
    await look(m.page, 'tree-mn-1-trees');
    await m.page.goto(s.console(`/trees/${code}`));
    await m.page.waitForSelector('#versions-table');
    await look(m.page, 'tree-mn-2-tree');
    const levels: string[] = [];
    m.page.on('request', (r) => {
      if (r.url().includes('/nodes?')) levels.push(new URL(r.url()).searchParams.get('q') ?? '');
    });
    await m.page.goto(s.console(`/trees/${code}/versions/v1?node=${a1Id}`));
    await m.page.waitForSelector('#node-panel #node-code:text-is("A1")');
    expect(await m.page.locator('#node-tree [data-code="A1"]').getAttribute('aria-selected')).toBe('true');
    // a Mongolian browser still edits the base name: the translation is in its own column only
    expect(await m.page.locator('#node-h').textContent()).toBe('Cash');
    expect(await m.page.locator('.translation.base .tr-name').textContent()).toBe('Cash');
    expect(await m.page.locator('.translation[data-lang="mn_MN"] input[name="name"]').inputValue()).toBe(
      'Бэлэн мөнгө',
    );
    // the roots and the root's children: two levels, nothing else
    expect(levels.sort()).toEqual(['parent_id is null', expect.stringMatching(/^parent_id = '/)].sort());
    await look(m.page, 'tree-mn-3-version');
    // the link with the ancestors: the same two levels, and no node read on the way up
    levels.length = 0;
    const walks: string[] = [];
    m.page.on('request', (r) => {
      if (/\/nodes\/[0-9a-f-]{36}\?fields=/.test(r.url())) walks.push(r.url());
    });
    await m.page.goto(s.console(a1Link.pathname + a1Link.search));
    await m.page.waitForSelector('#node-panel #node-code:text-is("A1")');
    expect(await m.page.locator('#node-tree [data-code="A1"]').getAttribute('aria-selected')).toBe('true');
    expect(levels.length).toBe(2);
    expect(walks).toEqual([]);
    await m.ctx.close();
  });
});
