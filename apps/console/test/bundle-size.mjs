#!/usr/bin/env node
// First-load size of the built console (npx nx run console:bench): what index.html makes the browser fetch before
// the first page shows (its module scripts, their static imports and the stylesheets), raw and gzipped (level 9,
// what a compressing proxy serves) and brotli. Target (issue 30): at most 300 KB of JavaScript gzipped.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, gzipSync, constants } from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const dir = path.join(root, 'dist/apps/console/public');
const html = readFileSync(path.join(dir, 'index.html'), 'utf8');
const TARGET_KB = 300;

const seen = new Set();
/** A file and, for JavaScript, the chunks it imports statically (loaded before it runs). */
function collect(rel) {
  if (seen.has(rel)) return;
  seen.add(rel);
  if (!rel.endsWith('.js')) return;
  const code = readFileSync(path.join(dir, rel), 'utf8');
  for (const m of code.matchAll(
    /(?:^|[;\n}])\s*import\s*(?:[^'"()]*?from\s*)?["'](\.\/[^"']+|\/assets\/[^"']+)["']/g,
  )) {
    collect(path.posix.join(path.posix.dirname(rel), m[1]).replace(/^\//, ''));
  }
}
for (const m of html.matchAll(/<(?:script[^>]*src|link[^>]*href)="\/([^"]+\.(?:js|css))"/g)) collect(m[1]);

const rows = [...seen].map((rel) => {
  const buf = readFileSync(path.join(dir, rel));
  return {
    file: rel,
    raw: buf.length,
    gzip: gzipSync(buf, { level: 9 }).length,
    brotli: brotliCompressSync(buf, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  };
});
const kb = (n) => (n / 1024).toFixed(1);
const pad = (s, n) => String(s).padEnd(n);
console.log(`${pad('file', 40)} ${pad('raw KB', 9)} ${pad('gzip KB', 9)} brotli KB`);
for (const r of rows)
  console.log(`${pad(r.file, 40)} ${pad(kb(r.raw), 9)} ${pad(kb(r.gzip), 9)} ${kb(r.brotli)}`);
const js = rows.filter((r) => r.file.endsWith('.js'));
const sum = (k) => js.reduce((a, r) => a + r[k], 0);
console.log(
  `first-load JavaScript: ${kb(sum('raw'))} KB raw, ${kb(sum('gzip'))} KB gzip, ${kb(sum('brotli'))} KB brotli ` +
    `(target ${TARGET_KB} KB gzip: ${sum('gzip') / 1024 <= TARGET_KB ? 'met' : 'MISSED'})`,
);
if (sum('gzip') / 1024 > TARGET_KB) process.exitCode = 1;
