import type { Account, AccountClaims, Configuration } from 'oidc-provider';
import type { AccountUser } from '../oidc-data.js';

export const OIDC_SCOPES = ['openid', 'offline_access', 'profile', 'email', 'address', 'phone'] as const;

/** Claims per scope (document 1, "Get user info"); `phone_verified` is document 1's name, beside OIDC's own. */
export const CLAIMS = {
  openid: ['sub'],
  profile: [
    'name',
    'family_name',
    'given_name',
    'middle_name',
    'nickname',
    'preferred_username',
    'profile',
    'picture',
    'website',
    'gender',
    'birthdate',
    'zoneinfo',
    'locale',
    'updated_at',
  ],
  email: ['email', 'email_verified'],
  address: ['address'],
  phone: ['phone_number', 'phone_number_verified', 'phone_verified'],
};

export function userClaims(user: AccountUser): AccountClaims {
  const epoch = (d: Date | string | null | undefined) =>
    d ? Math.floor(new Date(d).getTime() / 1000) : undefined;
  const claims: Record<string, unknown> = {
    sub: user.id,
    name: user.name ?? ([user.givenName, user.familyName].filter(Boolean).join(' ') || undefined),
    given_name: user.givenName,
    family_name: user.familyName,
    middle_name: user.middleName,
    nickname: user.nickname,
    preferred_username: user.userName,
    picture: user.picture,
    gender: user.gender,
    birthdate: user.birthdate,
    zoneinfo: user.zoneinfo,
    locale: user.locale,
    updated_at: epoch(user.updatedAt),
    email: user.userEmail,
    email_verified: user.userEmail ? user.emailVerified : undefined,
    address: user.address ?? undefined,
    phone_number: user.phoneNumber,
    phone_number_verified: user.phoneNumber ? user.phoneVerified : undefined,
    phone_verified: user.phoneNumber ? user.phoneVerified : undefined,
  };
  for (const k of Object.keys(claims)) if (claims[k] === null || claims[k] === undefined) delete claims[k];
  return claims as AccountClaims;
}

export const toAccount = (user: AccountUser): Account => ({
  accountId: user.id,
  claims: () => userClaims(user),
});

/** The scopes and claims oidc-provider serves. */
export const claimsConfig = (): Pick<Configuration, 'scopes' | 'claims'> => ({
  scopes: [...OIDC_SCOPES],
  // acr and amr (RFC 8176) of the sign-in in every ID token, beside sub: oidc-provider puts the session's (or the
  // code's, the refresh token's) values among the available claims and masks them by scope like any other claim.
  claims: { ...CLAIMS, openid: [...CLAIMS.openid, 'acr', 'amr'], amr: null },
});
