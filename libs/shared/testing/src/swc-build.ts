import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root (this file is libs/shared/testing/src/swc-build.ts). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

/**
 * A directory of this test process's own under the repository's tmp/ (not the system's: compiled sources placed
 * there resolve their bare imports to the repository's node_modules). Not created; the caller removes it.
 */
export function scratchDir(prefix: string): string {
  return path.join(REPO_ROOT, 'tmp', `${prefix}-${process.pid}-${randomBytes(4).toString('hex')}`);
}

/**
 * Compiles `dirs` (paths from the repository's root, e.g. `apps/auth/src` and `libs`) into `out` as the `build`
 * target compiles them: swc with .swcrc, TypeScript files only, no spec files. Blocks for about a second.
 */
export function swcBuild(dirs: string[], out: string): void {
  execFileSync(
    path.join(REPO_ROOT, 'node_modules/.bin/swc'),
    [...dirs, '-d', out, '--config-file', '.swcrc', '--ignore', '**/*.spec.ts', '--only', '**/*.ts', '-q'],
    { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] },
  );
}
