import type { Sql } from '@gatehouse/db';
import { revokeUserTokens } from './oidc-payloads.js';

/**
 * The owner of an e-mail address proved it (an identity provider of the account's tenant verified it) while the
 * local account holding the address never did: whoever set that account up (a sign-up with somebody else's
 * address, say) proved nothing, so nothing they set up survives. The password and the phone number are cleared,
 * pending one-time codes and unused tickets dropped, other linked identities unlinked, every grant, refresh token,
 * access token and session revoked (the path a password change takes), and the address marked verified. Run in
 * the transaction that then links the owner's identity, with the user row locked.
 */
export async function takeOverUnverifiedAccount(db: Sql, userId: string): Promise<void> {
  await db.exec(
    `UPDATE users SET password_hash = NULL, email_verified = true, phone_number = NULL, phone_verified = false,
            failed_login_count = 0, locked_until = NULL, updated_at = now()
      WHERE id = $1`,
    [userId],
  );
  await db.exec(`DELETE FROM user_identities WHERE user_id = $1`, [userId]);
  await db.exec(`DELETE FROM one_time_codes WHERE user_id = $1`, [userId]);
  await db.exec(`DELETE FROM tickets WHERE user_id = $1 AND used_at IS NULL`, [userId]);
  await revokeUserTokens(db, userId);
}
