// Token server down. identity and tree validate bearer tokens at the token server's /tokeninfo and
// cache the answers (BEARER_CACHE_TTL_SEC). With the token server stopped: tokens in their cache keep working until
// the cache entry expires; any other token is 503 service_unavailable (never 401, never 500, never a hang); when the
// token server is back, every valid token works again without restarting identity or tree.
//
//   node tools/reliability/auth-down.mjs
import { buildServices, startStack } from './lib/stack.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function call(url, token) {
  const started = performance.now();
  try {
    const res = await fetch(url, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    return { status: res.status, ms: Math.round(performance.now() - started), body: text.slice(0, 160) };
  } catch (err) {
    return { status: 0, ms: Math.round(performance.now() - started), body: String(err) };
  }
}

/**
 * @param {import('./lib/stack.mjs').Stack} stack  started with BEARER_CACHE_TTL_SEC = cacheTtlSec
 * @param {{ cacheTtlSec: number; log?: (s: string) => void }} o
 */
export async function authDown(stack, o) {
  const log = o.log ?? (() => undefined);
  const identity = `${stack.identityUrl}/api/v1/clients?limit=1`;
  const tree = `${stack.treeUrl}/api/v1/trees?limit=1`;
  const problems = [];
  const expect = (what, res, statuses) => {
    if (!statuses.includes(res.status))
      problems.push(`${what}: ${res.status} (${res.body}), expected ${statuses.join(' or ')}`);
  };

  const cachedMgmt = await stack.token('urn:gatehouse:management');
  const cachedTree = await stack.token('urn:gatehouse:tree');
  expect('identity, token seen before the outage', await call(identity, cachedMgmt), [200]);
  expect('tree, token seen before the outage', await call(tree, cachedTree), [200]);
  const freshMgmt = await stack.token('urn:gatehouse:management');
  const freshTree = await stack.token('urn:gatehouse:tree');
  const cachedAt = Date.now();

  log('stopping the token server');
  await stack.stop('auth');
  const during = {
    cachedIdentity: await call(identity, cachedMgmt),
    cachedTree: await call(tree, cachedTree),
    uncachedIdentity: await call(identity, freshMgmt),
    uncachedTree: await call(tree, freshTree),
    garbageIdentity: await call(identity, 'not-a-token'),
  };
  const servedFromCacheWithinMs = Date.now() - cachedAt;
  expect('identity, cached token, token server down', during.cachedIdentity, [200]);
  expect('tree, cached token, token server down', during.cachedTree, [200]);
  expect('identity, unseen token, token server down', during.uncachedIdentity, [503]);
  expect('tree, unseen token, token server down', during.uncachedTree, [503]);
  expect('identity, garbage token, token server down', during.garbageIdentity, [503]);
  for (const [k, v] of Object.entries(during)) if (v.ms > 5000) problems.push(`${k} took ${v.ms} ms`);

  // Past the cache's lifetime a cached token can no longer be vouched for.
  await sleep(Math.max(0, o.cacheTtlSec * 1000 - (Date.now() - cachedAt)) + 500);
  const expired = { identity: await call(identity, cachedMgmt), tree: await call(tree, cachedTree) };
  expect('identity, cached token after the cache expired', expired.identity, [503]);
  expect('tree, cached token after the cache expired', expired.tree, [503]);

  log('starting the token server again');
  const restartAt = Date.now();
  await stack.start('auth');
  let recoveredMs;
  while (Date.now() - restartAt < 30_000) {
    const [a, b] = [await call(identity, freshMgmt), await call(tree, freshTree)];
    if (a.status === 200 && b.status === 200) {
      recoveredMs = Date.now() - restartAt;
      break;
    }
    await sleep(100);
  }
  if (recoveredMs === undefined)
    problems.push('identity and tree did not accept tokens within 30 s of the token server returning');
  const pids = Object.fromEntries(Object.entries(stack.procs).map(([k, p]) => [k, p.exitCode === null]));
  if (!pids.identity || !pids.tree) problems.push('identity or tree stopped');
  return {
    cacheTtlSec: o.cacheTtlSec,
    during: Object.fromEntries(Object.entries(during).map(([k, v]) => [k, `${v.status} in ${v.ms} ms`])),
    servedFromCacheWithinMs,
    afterCacheExpiry: { identity: expired.identity.status, tree: expired.tree.status },
    recoveredMs,
    problems,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  buildServices();
  const cacheTtlSec = Number(process.env.RELIABILITY_CACHE_TTL_SEC ?? 5);
  const stack = await startStack({
    env: { BEARER_CACHE_TTL_SEC: String(cacheTtlSec) },
    adminUrl: process.env.RELIABILITY_PG_URL,
    embedded: !process.env.RELIABILITY_PG_URL,
    log: (s) => console.log(`  ${s}`),
  });
  let failed = true;
  try {
    const result = await authDown(stack, { cacheTtlSec, log: (s) => console.log(`  ${s}`) });
    console.log(JSON.stringify(result, null, 2));
    failed = result.problems.length > 0;
  } finally {
    await stack.close();
  }
  console.log(failed ? 'auth-down: FAILED' : 'auth-down: passed');
  process.exit(failed ? 1 : 0);
}
