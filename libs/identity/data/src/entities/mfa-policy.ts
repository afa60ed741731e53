/** The MFA policy of an instance, tenant or client (null there: inherit; docs/security.md "Second factors"). */
export type MfaPolicy = 'off' | 'optional' | 'required';
export const MFA_POLICIES: readonly MfaPolicy[] = ['off', 'optional', 'required'];
