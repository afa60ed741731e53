import type { Sql } from '@gatehouse/db';
import { SecretBox, sealedIn } from './secret-box.js';

/** The columns that hold sealed secrets, each with its row key and the binding of a row's value. */
const SEALED_COLUMNS = [
  { table: 'clients', column: 'client_secret_enc', key: 'id', binding: sealedIn.clientSecret },
  { table: 'resources', column: 'signing_secret_enc', key: 'id', binding: sealedIn.resourceSigningSecret },
  {
    table: 'tenant_identity_providers',
    column: 'client_secret_enc',
    key: 'id',
    binding: sealedIn.identityProviderSecret,
  },
  { table: 'signing_keys', column: 'private_jwk_enc', key: 'kid', binding: sealedIn.signingKey },
] as const;

const LOCK_KEY = 'gatehouse:reseal-secrets';

export interface ResealLogger {
  info(msg: string): void;
  warn(msg: string): void;
}

/**
 * Re-seals every secret still in the unbound format of earlier releases (`gh1.`) bound to its row (`gh2.`), once,
 * at start: only the running service knows the key, so no migration file can do it. One transaction under an
 * advisory lock (services starting together re-seal once; the second finds nothing), rows locked while rewritten.
 * A value that does not open (sealed with a key this process lacks) is left as it was and named in the log: it
 * stayed unreadable before too. Returns the number of values re-sealed.
 */
export async function resealUnboundSecrets(db: Sql, box: SecretBox, log?: ResealLogger): Promise<number> {
  const opener = box.acceptingUnbound();
  return db.transaction(async (tx) => {
    await tx.exec(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [LOCK_KEY]);
    let resealed = 0;
    for (const { table, column, key, binding } of SEALED_COLUMNS) {
      const rows = await tx.rows<{ k: string; v: string }>(
        `SELECT ${key}::text AS k, ${column} AS v FROM ${table} WHERE ${column} LIKE 'gh1.%' FOR UPDATE`,
      );
      for (const { k, v } of rows) {
        let plain: string;
        try {
          plain = opener.decrypt(v, binding(k));
        } catch {
          log?.warn(`${table} ${k}: its ${column} cannot be opened with the configured keys; left as it was`);
          continue;
        }
        await tx.exec(`UPDATE ${table} SET ${column} = $2 WHERE ${key} = $1`, [
          k,
          box.encrypt(plain, binding(k)),
        ]);
        resealed++;
      }
    }
    if (resealed) log?.info(`re-sealed ${resealed} stored secrets bound to their rows`);
    return resealed;
  });
}
