// The data layer's rules, checked on the source (docs/architecture.md "Data layer"):
//  1. one SQL helper: nothing outside libs/shared/db opens pg pools or clients, reaches into TypeORM's driver, or
//     runs SQL through a TypeORM DataSource / EntityManager / QueryRunner at run time (migrations excepted);
//  2. tenant and instance scoping in one place: the management API reads its tenant-scoped tables only through
//     their table modules (libs/identity/data/src/tables), whose ScopedTable adds the conditions; a literal read of
//     such a table must say why it is not scoped, and a `${xTable.from}` must come with that table's conditions.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
    .filter((f) => !/\.spec\.ts$/.test(f) && !f.includes('/migrations/') && !f.includes('/test/'));
}

const RUNTIME = ['apps/auth/src', 'apps/identity/src', 'apps/tree/src', 'libs'].flatMap(sourceFiles);
const line = (text: string, index: number) => text.slice(0, index).split('\n').length;

describe('data layer: one way to run SQL', () => {
  const forbidden: [RegExp, string][] = [
    [/new\s+pg\.(Pool|Client)\b|new\s+(Pool|Client)\s*\(/, 'opens its own pg pool or client'],
    [/\.driver\b[^\n]*\.master\b|\.driver as unknown/, "reaches into TypeORM's driver"],
    [/createQueryRunner\s*\(/, 'runs SQL through a TypeORM QueryRunner'],
    [
      /getRepository\s*\(|createQueryBuilder\s*\(|InjectDataSource|InjectRepository/,
      'uses TypeORM repositories',
    ],
    [/\bEntityManager\b/, 'runs SQL through a TypeORM EntityManager'],
  ];
  // TypeORM stays for the schema: migrations and the migration runner of libs/shared/db. The change feed LISTENs on
  // a session of its own (a LISTEN cannot share a pooled connection), opened on the database URL.
  const allowed = (file: string) =>
    file.startsWith('libs/shared/db/src/') ||
    file.startsWith('libs/shared/testing/src/') ||
    file === 'libs/shared/bearer/src/change-feed.ts';

  it.each(RUNTIME.filter((f) => !allowed(f)))('%s', (file) => {
    const text = readFileSync(path.join(root, file), 'utf8');
    const found = forbidden
      .filter(([re]) => re.test(text))
      .map(([re, why]) => `${file}:${line(text, text.search(re))} ${why}`);
    expect(found).toEqual([]);
  });
});

// The scoped tables, read from their declarations (`new ScopedTable({ name: '...', ...})`, or a Table with its
// columns) anywhere in the runtime source, so a table declared scoped cannot be left out of the check below.
const declaration = /new\s+(?:ScopedTable|Table)\s*\(\s*\{\s*name:\s*'([a-z_]+)'/g;
const declared = RUNTIME.map((file) => {
  const text = readFileSync(path.join(root, file), 'utf8');
  return { file, text, names: [...text.matchAll(declaration)].map((m) => m[1]) };
});
const SCOPED = declared.flatMap((d) => d.names);

describe('data layer: every ScopedTable is declared in the form the scoping check reads', () => {
  it.each(declared.filter((d) => /new\s+(?:ScopedTable|Table)\b/.test(d.text)).map((d) => d.file))(
    '%s',
    (file) => {
      const { text, names } = declared.find((d) => d.file === file)!;
      expect(names.length).toBe(text.match(/new\s+(?:ScopedTable|Table)\b/g)?.length);
    },
  );

  it('finds the scoped tables', () => {
    expect(SCOPED.length).toBeGreaterThan(0);
    expect(new Set(SCOPED).size).toBe(SCOPED.length);
  });
});

describe('data layer: tenant and instance scoping in one place', () => {
  const files = sourceFiles('apps/identity/src');
  const literalRead = new RegExp(`(?<!DELETE\\s)\\b(FROM|JOIN)\\s+(${SCOPED.join('|')})\\b`, 'g');

  it.each(files)('%s', (file) => {
    const text = readFileSync(path.join(root, file), 'utf8');
    const problems: string[] = [];
    for (const m of text.matchAll(literalRead)) {
      const after = text.slice(m.index, m.index + 120);
      if (!/\/\*\s*unscoped:/.test(after))
        problems.push(`${file}:${line(text, m.index)} reads ${m[2]} without its table module`);
    }
    for (const m of text.matchAll(/\$\{(\w+Table)\.from\}/g)) {
      const table = m[1];
      const around = text.slice(Math.max(0, m.index - 600), m.index + 700);
      const scoped =
        around.includes(`${table}.where(`) ||
        around.includes(`${table}.conditions(`) ||
        /^\$\{\w+\.from\}\s*\/\*\s*scoped:/.test(text.slice(m.index, m.index + 80));
      if (!scoped) problems.push(`${file}:${line(text, m.index)} ${table}.from without its conditions`);
    }
    for (const m of text.matchAll(/\b\w+\.(instance_id|tenant_id)\s*=\s*\$\d/g)) {
      problems.push(`${file}:${line(text, m.index)} writes a scoping condition by hand (${m[0]})`);
    }
    expect(problems).toEqual([]);
  });
});
