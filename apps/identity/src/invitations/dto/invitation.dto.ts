import { ApiProperty, ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { IsEmail, IsUUID, MaxLength } from 'class-validator';
import { CreateUserDto } from '../../users/dto/user.dto.js';
import { NullableIfPresent } from '../../common/validation.js';
import { ResultUrl, TICKET_MAX_TTL_SEC, TtlSec } from '../../tickets/dto/ticket.dto.js';

/**
 * POST /users/invite: the fields of a user create without a password (the invited user chooses it through the
 * link) and without user_email_verified (the link verifies it); `user_email` is required (the invitation goes
 * there); `client_id`, `result_url`, `ttl_sec` describe the invitation's link.
 */
export class InviteUserDto extends OmitType(CreateUserDto, [
  'password',
  'user_email',
  'user_email_verified',
] as const) {
  @ApiProperty({
    example: 'bat@example.com',
    description: 'Unique in the instance (any case); the invitation goes here',
  })
  @IsEmail({}, { message: '$property must be an e-mail address' })
  @MaxLength(320)
  user_email: string;

  @ApiPropertyOptional({
    type: String,
    format: 'uuid',
    nullable: true,
    description:
      "The application the user is invited to (named in the e-mail; a client of the caller's reach, else 404)",
  })
  @NullableIfPresent()
  @IsUUID('all')
  client_id?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'https://app.example.com/welcome',
    description: 'Where the page sends the user once the password is set (absolute http(s) URL)',
  })
  @ResultUrl()
  result_url?: string | null;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: TICKET_MAX_TTL_SEC,
    description: 'Seconds the invitation link works (default 432000, 5 days)',
  })
  @TtlSec()
  ttl_sec?: number;
}
