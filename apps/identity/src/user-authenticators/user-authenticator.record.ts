import { ApiProperty } from '@nestjs/swagger';
import { userAuthenticatorsTable, type UserAuthenticatorRow } from '@gatehouse/identity-data';
import { defineVersionedRecord, type VersionedAttribute } from '../common/records.js';
import type { ApiVersion } from '../common/version.js';
import { AuditDoc } from '@gatehouse/http';

/**
 * A second factor of a user (`totp`: an authenticator app; `recovery_codes`: its set of single-use codes;
 * `webauthn`: a passkey). Never a secret, a code, a hash or a key: the table's `secret_enc`, `last_step`,
 * `code_hashes`, `credential_id`, `public_key`, `sign_count`, `transports` and `backup_eligible` are hidden columns.
 */
export interface UserAuthenticatorRecord {
  id: string;
  instance_id: string;
  user_id: string;
  type: string;
  name: string;
  confirmed_at: string | null;
  last_used_at: string | null;
  created_by: string | null;
  created_at: string;
  updated_by: string | null;
  updated_at: string;
}

/** The record of a row: a copy of its visible columns. */
export const userAuthenticatorRecord = (row: UserAuthenticatorRow): UserAuthenticatorRecord =>
  userAuthenticatorsTable.record(row) as UserAuthenticatorRecord;

export const userAuthenticatorSpecs = defineVersionedRecord({
  name: 'user_authenticator',
  attributes: userAuthenticatorsTable.attributes<VersionedAttribute>(),
  children: { v1: [], v2: [] },
});

/** One shape in both presentations (the record's fields are snake_case in both, as the user's own). */
export const shapeUserAuthenticator = (_v: ApiVersion) => (r: UserAuthenticatorRecord) =>
  ({ ...r }) as Record<string, unknown>;

export class UserAuthenticatorDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  instance_id: string;

  @ApiProperty({ format: 'uuid' })
  user_id: string;

  @ApiProperty({
    enum: ['totp', 'recovery_codes', 'webauthn'],
    description:
      '`totp`: an authenticator app (RFC 6238); `recovery_codes`: the set of ten single-use codes made with it; ' +
      '`webauthn`: a passkey (WebAuthn), added by its user on the account page, named by them (`name`). A ' +
      "passkey's credential id, public key, signature counter and transports are never answered",
  })
  type: string;

  @ApiProperty({
    example: 'Authenticator app',
    description: "`Authenticator app`, `Recovery codes`, or the name a passkey's user gave it",
  })
  name: string;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      'When the first code confirmed it (a passkey: when it was added); null while an enrolment waits for its first code',
  })
  confirmed_at: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Its last successful use' })
  last_used_at: string | null;
}
