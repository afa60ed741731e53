// Vite build of the console: dist/apps/console/public, hashed file names under assets/ (served immutable by
// server/main.mjs), no inline script (the CSP allows scripts from the console's origin only).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react-swc';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
// The libraries' aliases (@gatehouse/sdk) as tsconfig.base.json names them.
const { paths } = JSON.parse(readFileSync(path.join(root, 'tsconfig.base.json'), 'utf8')).compilerOptions;
const alias = Object.fromEntries(
  Object.entries(paths).map(([name, [target]]) => [name, path.resolve(root, target)]),
);

export default defineConfig({
  root: here,
  base: '/',
  plugins: [react()],
  resolve: { alias },
  build: {
    outDir: path.join(root, 'dist/apps/console/public'),
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    sourcemap: false,
    // no data: URL fonts or scripts; small images may still be inlined (img-src allows data:)
    assetsInlineLimit: 2048,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  server: { port: 5173, strictPort: true },
});
