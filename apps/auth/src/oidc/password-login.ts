import {
  isLockedOut,
  recordSuccessfulLogin,
  registerFailedLogin,
  verifyPassword,
  type LockoutPolicy,
} from '@gatehouse/identity-data';
import type { Sql } from './adapters/sql.js';
import { userMaySignInThrough } from './sign-in-policy.js';
import type { OidcData, User } from './oidc-data.js';

export type { LockoutPolicy };

export type LoginFailure = 'invalid_credentials' | 'blocked' | 'locked';

export class LoginError extends Error {
  constructor(readonly reason: LoginFailure) {
    super(reason);
  }
}

/**
 * Resource-owner password login: the login is an e-mail, a user name or a phone number of the client's instance.
 * An unknown login and a wrong password fail alike (same error; an argon2 verification runs either way, so the
 * timing is similar). Failures are counted per user; `threshold` consecutive ones lock the account for
 * `lockSeconds`, and a locked account is refused even with the right password. A blocked user is refused once the
 * password is right, so blocking reveals nothing to someone who does not know it.
 */
export class PasswordLogin {
  constructor(
    private readonly sql: Sql,
    private readonly data: OidcData,
    private readonly policy: LockoutPolicy,
  ) {}

  async authenticate(
    instanceId: string,
    login: string,
    password: string,
    clientTenantId: string | null = null,
  ): Promise<User> {
    const found = await this.data.findUserByLogin(instanceId, login);
    // A user of another tenant than the client's does not exist for this client: the same answer as an unknown
    // login, and no failure counted against that user.
    const user = found && userMaySignInThrough(found, clientTenantId) ? found : undefined;
    if (!user?.passwordHash) {
      await verifyPassword(null, password);
      throw new LoginError('invalid_credentials');
    }
    if (isLockedOut(user)) {
      await verifyPassword(null, password);
      throw new LoginError('locked');
    }
    if (!(await verifyPassword(user.passwordHash, password))) {
      const result = await registerFailedLogin(this.sql, user.id, this.policy);
      throw new LoginError(result?.locked ? 'locked' : 'invalid_credentials');
    }
    if (user.isBlocked) throw new LoginError('blocked');
    await recordSuccessfulLogin(this.sql, user.id);
    return user;
  }
}
