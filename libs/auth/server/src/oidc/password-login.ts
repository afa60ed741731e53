import {
  isLockedFrom,
  recordSuccessfulLogin,
  registerFailedLogin,
  verifyPassword,
  type LockoutPolicy,
} from '@gatehouse/identity-data';
import type { Sql } from '@gatehouse/db';
import type { SigninFailureReason } from '@gatehouse/identity-data';
import type { AuthEvents, EventSource } from '../events/auth-events.js';
import { userMaySignInThrough, type SignInClient } from './sign-in-policy.js';
import type { OidcData, User } from './oidc-data.js';

export type { LockoutPolicy };

export type LoginFailure = 'invalid_credentials' | 'blocked';

export class LoginError extends Error {
  constructor(
    readonly reason: LoginFailure,
    /** What the audit trail records (the answer stays `reason`: no account oracle). */
    readonly detail?: SigninFailureReason,
  ) {
    super(reason);
  }
}

/** How a sign-in is recorded in the audit trail: the client it goes through, the path, the request's source. */
export interface LoginAudit {
  clientId: string;
  /** `password` (the grant) or `login_page`. */
  method: string;
  source: EventSource;
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
    private readonly events?: AuthEvents,
    /** The clock lockouts are counted by (tests move it instead of waiting). */
    public clock: () => Date = () => new Date(),
  ) {}

  async authenticate(
    instanceId: string,
    login: string,
    password: string,
    client: SignInClient,
    source = 'unknown',
    audit?: LoginAudit,
  ): Promise<User> {
    try {
      const user = await this.check(instanceId, login, password, client, source, audit);
      if (audit) this.recordSignin(instanceId, audit, client, user, undefined);
      return user;
    } catch (err) {
      if (audit && err instanceof LoginError) {
        const user = (err as LoginError & { user?: User }).user;
        this.recordSignin(instanceId, audit, client, user, err.detail);
      }
      throw err;
    }
  }

  /**
   * The password of a signed-in user confirmed again (the account pages: password change, removing a factor). The
   * login's lockout applies: a wrong one counts against the user from `source` as a failed login, and a locked
   * source is refused even with the right password. A right one is not a sign-in (nothing is counted or reset).
   * With `audit`, a refusal is recorded as the login's would be: `signin.failure` (`wrong_password`, or `locked`
   * from a locked address), and `account.locked` when this failure locks the address.
   */
  async confirm(
    user: Pick<User, 'id' | 'passwordHash' | 'instanceId' | 'tenantId'>,
    password: string,
    source: string,
    audit?: LoginAudit,
  ): Promise<boolean> {
    const now = this.clock();
    const refused = (reason: SigninFailureReason) => {
      if (audit)
        this.events?.signin({
          instanceId: user.instanceId,
          tenantId: user.tenantId,
          userId: user.id,
          clientId: audit.clientId,
          method: audit.method,
          source: audit.source,
          reason,
        });
      return false;
    };
    if (!user.passwordHash || (await isLockedFrom(this.sql, user.id, source, now))) {
      await verifyPassword(null, password);
      return refused(user.passwordHash ? 'locked' : 'wrong_password');
    }
    if (await verifyPassword(user.passwordHash, password)) return true;
    const counted = await registerFailedLogin(this.sql, user.id, source, this.policy, now);
    if (counted?.locked && audit) this.lockEvent('account.locked', user, audit, lockedDetails(counted));
    return refused('wrong_password');
  }

  /**
   * `account.locked` (this failure reached the threshold: the account was not locked from here before it) or
   * `account.unlocked` (the lock of this address had run out), by the system, about the user.
   */
  private lockEvent(
    type: 'account.locked' | 'account.unlocked',
    user: Pick<User, 'id' | 'instanceId' | 'tenantId'>,
    audit: LoginAudit,
    details: Record<string, unknown>,
  ): void {
    this.events?.record({
      type,
      instanceId: user.instanceId,
      tenantId: user.tenantId,
      actor: { type: 'system' },
      userId: user.id,
      clientId: audit.clientId,
      ip: audit.source.ip,
      userAgent: audit.source.userAgent,
      details: { method: audit.method, ...details },
    });
  }

  private async check(
    instanceId: string,
    login: string,
    password: string,
    client: SignInClient,
    source: string,
    audit: LoginAudit | undefined,
  ): Promise<User> {
    const found = await this.data.findUserByLogin(instanceId, login);
    // A user the client may not sign in (another tenant's, through a client that is not global) does not exist
    // for this client: the same answer as an unknown login, and no failure counted against that user.
    const user = found && userMaySignInThrough(found, client) ? found : undefined;
    const now = this.clock();
    if (!user?.passwordHash || (await isLockedFrom(this.sql, user.id, source, now))) {
      await verifyPassword(null, password);
      const detail: SigninFailureReason = !found
        ? 'unknown_user'
        : !user
          ? client.isGlobal || client.tenantId === null
            ? 'client_not_allowed'
            : 'tenant_mismatch'
          : user.passwordHash
            ? 'locked'
            : 'wrong_password';
      throw withUser(new LoginError('invalid_credentials', detail), found ?? undefined);
    }
    if (!(await verifyPassword(user.passwordHash, password))) {
      const counted = await registerFailedLogin(this.sql, user.id, source, this.policy, now);
      if (counted?.locked && audit) this.lockEvent('account.locked', user, audit, lockedDetails(counted));
      throw withUser(new LoginError('invalid_credentials', 'wrong_password'), user);
    }
    if (user.isBlocked) throw withUser(new LoginError('blocked', 'blocked'), user);
    if ((await recordSuccessfulLogin(this.sql, user.id, source)) && audit) {
      // the lock of this address had run out: the account signs in from here again
      this.lockEvent('account.unlocked', user, audit, { cause: 'lock_expired' });
    }
    return user;
  }

  private recordSignin(
    instanceId: string,
    audit: LoginAudit,
    client: SignInClient,
    user: User | undefined,
    reason: SigninFailureReason | undefined,
  ): void {
    // A user the client may not sign in is not named: the event belongs to the client's tenant, whose
    // administrators must learn nothing of another tenant's users.
    const outside = reason === 'tenant_mismatch' || reason === 'client_not_allowed';
    this.events?.signin({
      instanceId,
      tenantId: outside ? client.tenantId : (user?.tenantId ?? client.tenantId),
      userId: outside ? null : user?.id,
      clientId: audit.clientId,
      method: audit.method,
      source: audit.source,
      reason,
    });
  }
}

/** `locked_until` of an account.locked event. */
function lockedDetails(counted: { lockedUntil?: Date | string | number | null }): Record<string, unknown> {
  return { locked_until: counted.lockedUntil ? new Date(counted.lockedUntil).toISOString() : null };
}

/** The user a failure is about (for the audit trail only; never part of the answer). */
function withUser(err: LoginError, user: User | undefined): LoginError {
  if (user) Object.defineProperty(err, 'user', { value: user, enumerable: false });
  return err;
}
