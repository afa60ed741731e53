import { commonEnv, loadEnvOrExit } from '@gatehouse/config';
import { Db } from '@gatehouse/db';
import { loadSecretBox } from '@gatehouse/identity-data';
import { authEnv, rotateSigningKeys } from '@gatehouse/token-server';

/**
 * `nx run auth:rotate-keys` (or `node dist/apps/auth/apps/auth/src/rotate-keys.js [--grace-seconds N]`): add new
 * RS256 and ES256 signing keys. Running token servers sign with them within AUTH_KEY_REFRESH_SEC; the previous keys
 * stay published at /jwks until every token they signed has expired, then the next rotation deletes them.
 */
const env = loadEnvOrExit({ ...commonEnv, ...authEnv }, 'auth');
if (!env.DATABASE_URL) {
  process.stderr.write('[auth] configuration error: DATABASE_URL must be set\n');
  process.exit(1);
}
const i = process.argv.indexOf('--grace-seconds');
const grace = i > 0 ? Number(process.argv[i + 1]) : undefined;
if (grace !== undefined && !(Number.isSafeInteger(grace) && grace >= 0)) {
  process.stderr.write('[auth] --grace-seconds must be a non-negative integer\n');
  process.exit(1);
}

const db = new Db({ url: env.DATABASE_URL, applicationName: 'gatehouse-auth-rotate-keys', poolMax: 2 });
try {
  const { box } = loadSecretBox(env);
  const r = await rotateSigningKeys(db, box, env, grace);
  process.stdout.write(
    `[auth] signing keys rotated: new ${r.added.join(', ')}; previous ${r.retired.join(', ') || '(none)'} published ` +
      `for ${r.graceSeconds} s more; ${r.deleted} expired key(s) deleted\n`,
  );
} finally {
  await db.close();
}
