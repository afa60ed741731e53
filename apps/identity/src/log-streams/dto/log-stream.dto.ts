import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsNotEmpty,
  IsString,
  IsUUID,
  MaxLength,
  MinLength,
} from 'class-validator';
import { AuditDoc } from '@gatehouse/http';
import { EVENT_TYPES } from '@gatehouse/identity-data';
import { IsProviderUrl } from '../../identity-providers/dto/identity-provider.dto.js';
import { NotNullIfPresent, NullableIfPresent } from '../../common/validation.js';

const TYPES = Object.keys(EVENT_TYPES);
const TYPES_MESSAGE = `each value in $property must be an event type of docs/events.md (${TYPES.join(', ')})`;

export class CreateLogStreamDto {
  @ApiProperty({ example: 'SIEM', maxLength: 255, description: 'Unique in the instance' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  name: string;

  @ApiProperty({
    example: 'https://siem.example.com/gatehouse',
    description:
      'Where deliveries are POSTed. https, not a literal internal address or localhost (unless OUTBOUND_ALLOWLIST names it)',
  })
  @IsString()
  @IsProviderUrl()
  url: string;

  @ApiPropertyOptional({
    type: [String],
    example: ['signin.failure', 'mgmt.updated'],
    description: 'The event types delivered; empty or absent: all',
  })
  @NotNullIfPresent()
  @IsArray()
  @ArrayMaxSize(100)
  @IsIn(TYPES, { each: true, message: TYPES_MESSAGE })
  event_types?: string[];

  @ApiPropertyOptional({
    example: 'a-secret-of-at-least-32-characters.....',
    minLength: 32,
    maxLength: 500,
    writeOnly: true,
    description: 'The signing secret; absent: one is made. Sealed at rest, answered only by this operation.',
  })
  @NotNullIfPresent()
  @IsString()
  @MinLength(32)
  @MaxLength(500)
  secret?: string;

  @ApiPropertyOptional({
    type: String,
    format: 'uuid',
    nullable: true,
    description:
      "Deliver only this tenant's events. A caller that is not global always gets its own tenant (another is 400).",
  })
  @NullableIfPresent()
  @IsUUID()
  tenant_id?: string | null;
}

export class UpdateLogStreamDto {
  @ApiPropertyOptional({ example: 'SIEM', maxLength: 255 })
  @NotNullIfPresent()
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  name?: string;

  @ApiPropertyOptional({ example: 'https://siem.example.com/gatehouse' })
  @NotNullIfPresent()
  @IsString()
  @IsProviderUrl()
  url?: string;

  @ApiPropertyOptional({ type: [String], example: ['signin.failure'] })
  @NotNullIfPresent()
  @IsArray()
  @ArrayMaxSize(100)
  @IsIn(TYPES, { each: true, message: TYPES_MESSAGE })
  event_types?: string[];

  @ApiPropertyOptional({
    minLength: 32,
    maxLength: 500,
    writeOnly: true,
    description: 'A new signing secret (never answered: the caller knows what it sent)',
  })
  @NotNullIfPresent()
  @IsString()
  @MinLength(32)
  @MaxLength(500)
  secret?: string;

  @ApiPropertyOptional({
    enum: ['active', 'paused'],
    description:
      '`paused` stops deliveries (events keep their place); `active` resumes a paused stream from where it stopped and forgets its failures',
  })
  @NotNullIfPresent()
  @IsIn(['active', 'paused'])
  status?: 'active' | 'paused';
}

export class LogStreamDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  instance_id: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  tenant_id: string | null;

  @ApiProperty({ example: 'SIEM' })
  name: string;

  @ApiProperty({ example: 'https://siem.example.com/gatehouse' })
  url: string;

  @ApiProperty({ type: [String], example: ['signin.failure'] })
  event_types: string[];

  @ApiProperty({ enum: ['active', 'paused'] })
  status: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'paused after 10 failed deliveries in a row: answered 500',
  })
  paused_reason: string | null;

  @ApiProperty({ description: 'Failed deliveries in a row (reset by a delivered batch)' })
  failures: number;

  @ApiProperty({ format: 'date-time', description: 'When the next delivery is tried' })
  next_attempt_at: string;

  @ApiProperty({ type: String, nullable: true, example: 'answered 500' })
  last_error: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  last_delivered_at: string | null;

  @ApiPropertyOptional({ description: 'The signing secret: only in the create answer' })
  secret?: string;
}
