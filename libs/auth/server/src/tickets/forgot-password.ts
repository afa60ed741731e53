import type { Sql } from '@gatehouse/db';
import { displayName, escapeHtml, type Delivery } from '@gatehouse/delivery';
import { issueTicket, TICKET_PATHS } from '@gatehouse/identity-data';
import type { OidcClientRecord, OidcData } from '../oidc/oidc-data.js';
import { userMaySignInThrough } from '../oidc/sign-in-policy.js';
import type { OneTimeCodes } from '../passwordless/one-time-codes.js';

/** How long a "forgot password" link works (the ticket's lifetime). */
export const FORGOT_TTL_SEC = 3600;
/** The send budget's channel of these messages (its own, beside the passwordless codes' and links'). */
const CHANNEL = 'password-reset';

export const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

function resetMail(clientName: string, url: string) {
  const app = displayName(clientName) || 'Gatehouse';
  return {
    subject: `Choose a new password for ${app}`,
    text:
      `Someone, perhaps you, asked to reset the password of your account for ${app}. Open this link to choose a ` +
      `new password (it works once, for one hour):\n${url}\nIf it was not you, ignore this message: nothing changes.`,
    html:
      `<p>Someone, perhaps you, asked to reset the password of your account for ${escapeHtml(app)}. Open this link ` +
      `to choose a new password (it works once, for one hour):</p><p><a href="${escapeHtml(url)}">` +
      `${escapeHtml(url)}</a></p><p>If it was not you, ignore this message: nothing changes.</p>`,
  };
}

/**
 * "Forgot password?" on the sign-in page: a password-change ticket (the management API's kind, redeemed by the
 * ticket pages) e-mailed to the account with that address, in the client's instance, when the user may sign in
 * through the client. The caller answers the same whatever happened (no account oracle); the passwordless send
 * budget (per account and per address: one a minute, five an hour by default) keeps it from being a mail cannon.
 */
export class ForgotPassword {
  constructor(
    private readonly deps: {
      sql: Sql;
      data: OidcData;
      codes: OneTimeCodes;
      delivery: Delivery;
      issuer: string;
      /** HMAC keys of ticket tokens (box.derive('tickets')). */
      ticketKeys: Buffer[];
    },
  ) {}

  /** Sends the link when there is an account to send it to and the budget allows; never says which. */
  async request(client: OidcClientRecord, email: string): Promise<void> {
    const user = await this.deps.data.findUserByLogin(client.instanceId, email);
    if (!user || user.isBlocked || !user.userEmail || user.userEmail.toLowerCase() !== email.toLowerCase())
      return;
    if (!userMaySignInThrough(user, client)) return;
    const ok = await this.deps.codes.mayBeSent({ userId: user.id, channel: CHANNEL, destination: email });
    if (!ok) return;
    await this.deps.sql.transaction(async (tx) => {
      const issued = await issueTicket(tx, this.deps.ticketKeys, {
        instanceId: client.instanceId,
        userId: user.id,
        kind: 'password_change',
        ttlSec: FORGOT_TTL_SEC,
        clientId: client.id,
        userEmail: user.userEmail,
        // the link reached the address: following it proves it as a verification ticket would
        markEmailVerified: true,
        actor: null,
      });
      const mail = resetMail(
        client.clientName,
        `${this.deps.issuer}${TICKET_PATHS.password_change}?ticket=${issued.token}`,
      );
      await this.deps.delivery.email(user.userEmail!, mail.subject, mail.text, {
        tx,
        kind: 'password-reset',
        html: mail.html,
      });
    });
  }
}
