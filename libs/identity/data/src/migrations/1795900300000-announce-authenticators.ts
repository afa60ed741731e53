import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `user_authenticators` announces `user:<user_id>` on the identity change feed, like the other tables the token
 * server's state cache depends on (migration 1790000700000 and its `gatehouse_announce_changes()`): the token server
 * keeps a user's MFA state (the effective policy, whether a TOTP or a passkey is enrolled) in that cache, and an
 * enrolment, a confirmation or a removal must drop it whoever makes it. The columns a sign-in writes on every use
 * (the last TIME step, the recovery codes' used marks, a passkey's counter, when it was used) announce nothing:
 * none of them changes what is enrolled.
 */
const IGNORED = ['last_used_at', 'last_step', 'code_hashes', 'sign_count', 'updated_at', 'updated_by'];

const EVENTS = [
  { op: 'INSERT', suffix: 'ins', referencing: 'REFERENCING NEW TABLE AS new_rows' },
  { op: 'UPDATE', suffix: 'upd', referencing: 'REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows' },
  { op: 'DELETE', suffix: 'del', referencing: 'REFERENCING OLD TABLE AS old_rows' },
] as const;

export class AnnounceAuthenticators1795900300000 implements MigrationInterface {
  name = 'AnnounceAuthenticators1795900300000';

  async up(q: QueryRunner): Promise<void> {
    const args = ['user', 'user_id', `{${IGNORED.join(',')}}`].map((a) => `'${a}'`).join(', ');
    for (const e of EVENTS) {
      await q.query(
        `CREATE TRIGGER tr_user_authenticators_changes_${e.suffix} AFTER ${e.op} ON user_authenticators
           ${e.referencing} FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_announce_changes(${args})`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const e of EVENTS) {
      await q.query(`DROP TRIGGER tr_user_authenticators_changes_${e.suffix} ON user_authenticators`);
    }
  }
}
