/**
 * Every event type Gatehouse records, with its stable code (the `type` of an event row, of `GET /logs` and of a log
 * stream's delivery). Codes never change meaning once released; new ones are added. docs/events.md renders this
 * table for people; a test checks that the document and this list agree.
 */
export const EVENT_TYPES = {
  // Sign-in and sign-up (token server)
  'signin.success': 'A person signed in (password, one-time code, identity provider or existing session).',
  'signin.failure': 'A sign-in was refused; `reason` says why (see SIGNIN_FAILURE_REASONS).',
  'signup.success': 'A person signed up.',
  'signup.failure': 'A sign-up was refused (`reason`: e.g. `email_taken`, `rate_limited`, `disabled`).',
  'otp.issued': 'A one-time code was sent (e-mail or SMS).',
  'otp.failure':
    'A one-time code was refused (`reason`: `wrong_code`, `expired`, `exhausted`, `rate_limited`).',
  'account.locked': 'An account was locked after too many failed sign-ins.',
  'account.unlocked': 'An account was unlocked (its lock expired, an administrator or a password reset).',
  'mfa.enrolled':
    'A person added an authenticator app (with new recovery codes) or a passkey, at sign-in or on the account page (`details.authenticator_type`).',
  'mfa.removed':
    "A user's authenticator was removed: by an administrator (one or all, `details.authenticator_type`) or by the person on the account page.",
  // Tokens (token server)
  'token.issued': 'A token endpoint request succeeded; `details.grant_type` names the grant.',
  'token.failure':
    'A token endpoint request was refused; `details.grant_type` and `reason` (the OAuth error).',
  'token.exchanged':
    'A token exchange (RFC 8693) succeeded; `details.upstream_issuer` names who issued the subject.',
  'token.revoked':
    'A token or a grant was revoked (revocation endpoint, sign-out of a grant, an administrator).',
  'refresh_token.reuse': 'A refresh token was used again after rotation: its whole grant was revoked.',
  logout: 'A person signed out (end-session endpoint).',
  'device.approved': 'A person approved a device code (device authorization grant).',
  'device.denied': 'A person denied a device code.',
  // Management API writes (identity service): one per record created, changed or deleted
  'mgmt.created': 'A record was created through the management API; `record_type`, `record_id`.',
  'mgmt.updated': 'A record was changed; `details.changes` has each changed field as `{ old, new }`.',
  'mgmt.deleted': 'A record was deleted.',
} as const;

export type EventType = keyof typeof EVENT_TYPES;

/** Why a sign-in failed (`reason` of `signin.failure`). */
export const SIGNIN_FAILURE_REASONS = {
  wrong_password: 'The password did not match.',
  unknown_user: 'No user with that login in the instance (and tenant).',
  locked: 'The account is locked after too many failed attempts.',
  blocked: 'The account is blocked by an administrator.',
  mfa_failed: 'A second factor or a passkey was refused (`details.mfa_reason`: `wrong_code`, `locked`, …)',
  client_not_allowed: 'The client may not sign this user in (connection, tenant or grant not allowed).',
  tenant_mismatch: "The user does not belong to the client's tenant.",
  wrong_code: 'The one-time code did not match.',
  upstream_failed: 'The identity provider refused or its answer could not be verified.',
} as const;

export type SigninFailureReason = keyof typeof SIGNIN_FAILURE_REASONS;

export type EventOutcome = 'success' | 'failure';

/** The outcome a type records unless the event says otherwise. */
export function defaultOutcome(type: EventType): EventOutcome {
  return type.endsWith('.failure') || type === 'refresh_token.reuse' ? 'failure' : 'success';
}

export function isEventType(value: string): value is EventType {
  return Object.prototype.hasOwnProperty.call(EVENT_TYPES, value);
}
