// One process serving the built apps/tree (dist/), built by its own service definition and started as its main.js
// does, in one of two variants (run by ./bearer.mjs, not by hand):
//   BENCH_VARIANT=guarded  the application as shipped: BearerModule's global guard in front of every route;
//   BENCH_VARIANT=open     the same application with one provider less: BearerModule without its APP_GUARD (the
//                          TokenValidator and the change feed stay). An Express middleware puts the caller of
//                          BENCH_TOKEN (validated once at start-up, through the same token server) on every
//                          request, as the guard would: same routes, same handlers, same statements, no token check.
// The tree service's environment as for main.js (TREE_DATABASE_URL, TREE_PORT, AUTH_URL, ...); BENCH_ROOT: the
// checkout whose dist/ is served. Sends `{ port }` to the parent once listening; stops on 'stop' or SIGTERM.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = process.env.BENCH_ROOT
  ? path.resolve(process.env.BENCH_ROOT)
  : path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const lib = (p) => import(pathToFileURL(path.join(root, 'dist/apps/tree', p)).href);
const { treeService } = await lib('apps/tree/src/tree.service-definition.js');
const { buildService } = await lib('libs/shared/service/src/index.js');
const { listen } = await lib('libs/shared/http/src/index.js');
const { commonEnv, loadEnvOrExit } = await lib('libs/shared/config/src/index.js');
const { BearerGuard, BearerModule, CALLER_KEY, TokenValidator } = await lib(
  'libs/shared/bearer/src/index.js',
);

const variant = process.env.BENCH_VARIANT;
if (variant !== 'guarded' && variant !== 'open')
  throw new Error(`BENCH_VARIANT: guarded or open, not ${variant}`);
const env = loadEnvOrExit({ ...commonEnv, ...treeService.envSchema }, 'tree');

/** The root module without the bearer guard (everything else, BearerModule's validator included, unchanged). */
function withoutGuard(dm) {
  const imports = dm.imports.map((m) =>
    m?.module === BearerModule
      ? { ...m, providers: m.providers.filter((p) => p?.useClass !== BearerGuard) }
      : m,
  );
  const removed = imports.reduce(
    (n, m, i) => n + ((dm.imports[i]?.providers?.length ?? 0) - (m?.providers?.length ?? 0)),
    0,
  );
  if (removed !== 1) throw new Error(`expected to remove one guard provider, removed ${removed}`);
  return { ...dm, imports };
}

let def = treeService;
if (variant === 'open') {
  const token = process.env.BENCH_TOKEN;
  const caller = await new TokenValidator({
    authUrl: env.AUTH_URL,
    cacheTtlSec: 3600,
    negativeTtlSec: 5,
  }).validate(token ?? '');
  if (!caller) throw new Error('BENCH_TOKEN is not an active token of the token server');
  def = {
    ...treeService,
    rootModule: (ctx) => withoutGuard(treeService.rootModule(ctx)),
    configure: async (app, ctx) => {
      await treeService.configure?.(app, ctx);
      app.use((req, _res, next) => {
        req[CALLER_KEY] = caller;
        next();
      });
    },
  };
}

const built = await buildService(def, env);
const server = await listen(built.app, env.TREE_PORT, '127.0.0.1');
process.send?.({ port: server.address().port });
const stop = async () => {
  await built.close().catch(() => undefined);
  process.exit(0);
};
process.on('message', (m) => {
  if (m === 'stop') void stop();
});
process.on('SIGTERM', () => void stop());
