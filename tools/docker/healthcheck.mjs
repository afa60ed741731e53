// Container HEALTHCHECK: exit 0 when this container's service answers /readyz with 200.
const service = process.env.SERVICE ?? 'auth';
const defaults = { auth: 3000, identity: 3001, tree: 3002, console: 3003 };
const port = process.env[`${service.toUpperCase()}_PORT`] ?? defaults[service];
try {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(3000) });
  process.exit(res.status === 200 ? 0 : 1);
} catch {
  process.exit(1);
}
