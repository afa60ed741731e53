import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsInt, IsString, IsUrl, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { NotNullIfPresent, NullableIfPresent } from '../../common/validation.js';

/** Longest life of a ticket (and an invitation): 30 days. */
export const TICKET_MAX_TTL_SEC = 2_592_000;
/** Default life of a password-change ticket: 1 day (Auth0's 86400). */
export const PASSWORD_CHANGE_TTL_SEC = 86_400;
/** Default life of an e-mail verification ticket and of an invitation: 5 days (Auth0's 432000). */
export const EMAIL_VERIFICATION_TTL_SEC = 432_000;

/** `result_url`: an absolute http(s) URL (localhost allowed, for development). */
export const ResultUrl = () => (target: object, key: string) => {
  NullableIfPresent()(target, key);
  IsString()(target, key);
  MaxLength(2048)(target, key);
  IsUrl(
    { protocols: ['http', 'https'], require_protocol: true, require_tld: false, require_host: true },
    { message: '$property must be an absolute http(s) URL' },
  )(target, key);
};

export const TtlSec = () => (target: object, key: string) => {
  NotNullIfPresent()(target, key);
  IsInt()(target, key);
  Min(1)(target, key);
  Max(TICKET_MAX_TTL_SEC)(target, key);
};

/** The body of both ticket operations. */
export class EmailVerificationTicketDto {
  @ApiProperty({
    format: 'uuid',
    description: 'The user (a tenant-bound caller: a user of its tenant, else 404)',
  })
  @IsUUID('all')
  user_id: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'https://app.example.com/welcome',
    description: 'Where the page sends the user after success (absolute http(s) URL); none: a success page',
  })
  @ResultUrl()
  result_url?: string | null;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: TICKET_MAX_TTL_SEC,
    description:
      'Seconds the link works (default: 86400 for a password change, 432000 for e-mail verification)',
  })
  @TtlSec()
  ttl_sec?: number;

  @ApiPropertyOptional({
    type: String,
    format: 'uuid',
    nullable: true,
    description:
      "The application the ticket is for (a client of the caller's reach, else 404); kept with the ticket",
  })
  @NullableIfPresent()
  @IsUUID('all')
  client_id?: string | null;
}

export class PasswordChangeTicketDto extends EmailVerificationTicketDto {
  @ApiPropertyOptional({
    default: false,
    description: "Setting the password through the link also marks the e-mail verified (Auth0's field)",
  })
  @NotNullIfPresent()
  @IsBoolean()
  mark_email_as_verified?: boolean;
}

/** 201 answer of both ticket operations. */
export class TicketDoc {
  @ApiProperty({
    example: 'https://auth.example.com/tickets/password-change?ticket=8bXr...',
    description: "URL of the token server's page (its public ISSUER URL); single use",
  })
  ticket: string;
}
