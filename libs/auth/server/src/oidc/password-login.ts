import {
  isLockedFrom,
  recordSuccessfulLogin,
  registerFailedLogin,
  verifyPassword,
  type LockoutPolicy,
} from '@gatehouse/identity-data';
import type { Sql } from '@gatehouse/db';
import { userMaySignInThrough, type SignInClient } from './sign-in-policy.js';
import type { OidcData, User } from './oidc-data.js';

export type { LockoutPolicy };

export type LoginFailure = 'invalid_credentials' | 'blocked';

export class LoginError extends Error {
  constructor(readonly reason: LoginFailure) {
    super(reason);
  }
}

/**
 * Resource-owner password login: the login is an e-mail, a user name or a phone number of the client's instance.
 * An unknown login, a wrong password and a locked one fail alike (same error; an argon2 verification runs every
 * time, so the timing is similar): nothing tells an attacker which accounts exist or are locked. Failures are
 * counted per user AND source address; `threshold` consecutive ones lock that user's logins from that address for
 * `lockSeconds`, refused even with the right password, while the user still signs in from any other address (as
 * Keycloak's and Auth0's brute-force protection allow), so nobody locks another out by failing on purpose. A
 * blocked user is refused once the password is right, so blocking reveals nothing to someone who does not know it.
 */
export class PasswordLogin {
  constructor(
    private readonly sql: Sql,
    private readonly data: OidcData,
    private readonly policy: LockoutPolicy,
    /** The clock lockouts are counted by (tests move it instead of waiting). */
    public clock: () => Date = () => new Date(),
  ) {}

  async authenticate(
    instanceId: string,
    login: string,
    password: string,
    client: SignInClient,
    source = 'unknown',
  ): Promise<User> {
    const found = await this.data.findUserByLogin(instanceId, login);
    // A user the client may not sign in (another tenant's, through a client that is not global) does not exist
    // for this client: the same answer as an unknown login, and no failure counted against that user.
    const user = found && userMaySignInThrough(found, client) ? found : undefined;
    const now = this.clock();
    if (!user?.passwordHash || (await isLockedFrom(this.sql, user.id, source, now))) {
      await verifyPassword(null, password);
      throw new LoginError('invalid_credentials');
    }
    if (!(await verifyPassword(user.passwordHash, password))) {
      await registerFailedLogin(this.sql, user.id, source, this.policy, now);
      throw new LoginError('invalid_credentials');
    }
    if (user.isBlocked) throw new LoginError('blocked');
    await recordSuccessfulLogin(this.sql, user.id, source);
    return user;
  }
}
