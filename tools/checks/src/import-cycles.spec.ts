// No import cycles between the source files of the apps and libs: a cycle makes module evaluation order decide
// whether a class is defined yet (TypeORM relations and Nest providers fail with "Cannot access ... before
// initialization"), and it is how one layer starts to depend on the layer above it. Type-only imports do not count:
// they vanish at build time. Lint's module boundaries cover imports between projects; this covers files.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : sourceFiles(p);
    return p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : [];
  });
}

/** Relative imports of a file that remain at run time (`import type` and all-`type` named imports excluded). */
export function runtimeImports(source: string): string[] {
  const out: string[] = [];
  const re =
    /^\s*(?:import|export)\s+(type\s+)?([\s\S]*?)\s*from\s+['"](\.{1,2}\/[^'"]+)['"]|^\s*import\s+['"](\.{1,2}\/[^'"]+)['"]/gm;
  for (const m of source.matchAll(re)) {
    if (m[4]) {
      out.push(m[4]);
      continue;
    }
    if (m[1]) continue;
    const clause = m[2];
    const named = /\{([^}]*)\}/.exec(clause);
    const outside = clause.replace(/\{[^}]*\}/, '').replace(/[\s,]/g, '');
    if (named && !outside) {
      const names = named[1]
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean);
      if (names.length && names.every((n) => n.startsWith('type '))) continue;
    }
    out.push(m[3]);
  }
  return out;
}

/** Strongly connected components of more than one file (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const stack: string[] = [];
  const onStack = new Set<string>();
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const found: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, idx.get(w)!));
      }
    }
    if (low.get(v) === idx.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component);
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found;
}

describe('import cycles', () => {
  it('reads runtime imports and skips type-only ones', () => {
    const src = [
      "import { a, type B } from './a.js';",
      "import type { C } from './c.js';",
      "import { type D, type E } from './d.js';",
      "export { F } from './f.js';",
      "export type { G } from './g.js';",
      "import './side-effect.js';",
      "import x from 'external';",
    ].join('\n');
    expect(runtimeImports(src)).toEqual(['./a.js', './f.js', './side-effect.js']);
  });

  it('none between the source files of apps and libs', () => {
    const files = [...sourceFiles(path.join(root, 'apps')), ...sourceFiles(path.join(root, 'libs'))];
    expect(files.length).toBeGreaterThan(100);
    const graph = new Map<string, string[]>();
    for (const f of files) {
      const targets = runtimeImports(readFileSync(f, 'utf8'))
        .map((spec) => path.resolve(path.dirname(f), spec).replace(/\.js$/, '.ts'))
        .filter((t) => existsSync(t));
      graph.set(f, targets);
    }
    expect(cycles(graph).map((c) => c.map((f) => path.relative(root, f)).sort())).toEqual([]);
  });
});
