import { ApiProperty } from '@nestjs/swagger';
import { EVENT_TYPES, SIGNIN_FAILURE_REASONS } from '@gatehouse/identity-data';

/** OpenAPI shapes of events (answers of GET /logs); docs/events.md is the contract of each field. */
export class LogActorDoc {
  @ApiProperty({ enum: ['user', 'client', 'system', 'anonymous'] })
  type: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The user or client id; null for system, anonymous',
  })
  id: string | null;

  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'The client a user acted through',
  })
  via_client_id: string | null;
}

export class LogRecordRefDoc {
  @ApiProperty({ example: 'client', description: 'The kind of record a management write changed' })
  type: string;

  @ApiProperty({ type: String, nullable: true })
  id: string | null;
}

export class LogDoc {
  @ApiProperty({ format: 'uuid', description: 'A UUIDv7: its first 48 bits are created_at in milliseconds' })
  id: string;

  @ApiProperty({ enum: Object.keys(EVENT_TYPES), description: 'The event type (docs/events.md)' })
  type: string;

  @ApiProperty({ enum: ['success', 'failure'] })
  outcome: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'wrong_password',
    description: `A reason code; of signin.failure one of ${Object.keys(SIGNIN_FAILURE_REASONS).join(', ')}; of token.failure the OAuth error (docs/events.md)`,
  })
  reason: string | null;

  @ApiProperty({ type: String, nullable: true, description: "The event type's meaning, from the catalogue" })
  description: string | null;

  @ApiProperty({ format: 'uuid' })
  instance_id: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  tenant_id: string | null;

  @ApiProperty({ type: () => LogActorDoc })
  actor: LogActorDoc;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'The user the event is about' })
  user_id: string | null;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'The client the event is about' })
  client_id: string | null;

  @ApiProperty({ type: () => LogRecordRefDoc, nullable: true, description: 'Management writes only' })
  record: LogRecordRefDoc | null;

  @ApiProperty({ type: String, nullable: true })
  ip: string | null;

  @ApiProperty({ type: String, nullable: true })
  user_agent: string | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'Type-specific: grant_type, upstream_issuer, changes ({ field: { old, new } }); count on a token.issued of ' +
      'client_credentials standing for that many identical tokens (same client, audience, address and user agent ' +
      'within one flush interval of the token server, 200 ms by default; absent: one)',
  })
  details: Record<string, unknown>;

  @ApiProperty({ format: 'date-time' })
  created_at: string;
}

/** v1 and v2 answer the same record (document 2 keeps record field names in snake_case); one class each for the docs. */
export class LogV1Doc extends LogDoc {}
export class LogV2Doc extends LogDoc {}
