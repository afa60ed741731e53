import { Controller, Delete, Get, HttpCode, Inject, Patch, Post, Query, type Type } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Scopes } from '@gatehouse/bearer';
import { LOGS_READ, LOG_STREAMS_WRITE_SCOPE } from '@gatehouse/identity-data';
import { ApiErrorResponses, ApiUuidParams, UuidParam } from '@gatehouse/http';
import { Presenter } from '@gatehouse/query';
import { CallerAccess, type Access } from '../common/access.js';
import { ValidBody } from '../common/body.js';
import { versioned, type QueryParams } from '../common/controller.js';
import { ApiCollection, ApiListQuery, ApiNoContent, ApiReadQuery, ApiRecord } from '../common/openapi.js';
import { routeOf, type ApiVersion } from '../common/version.js';
import { CreateLogStreamDto, LogStreamDoc, UpdateLogStreamDto } from './dto/log-stream.dto.js';
import { logStreamSpecs, shapeLogStream } from './log-stream.record.js';
import { LogStreamsService } from './log-streams.service.js';

// ../shared/API.md: log streams are read with the audit trail's scope and changed with their own.
export const LOG_STREAMS_READ = LOGS_READ;
export const LOG_STREAMS_WRITE = LOG_STREAMS_WRITE_SCOPE;

const REACH =
  'A caller that is not global reaches only the streams of its own tenant (another answers 404, as an unknown one does).';

const DELIVERY =
  'Each delivery is a POST of `{"stream_id", "events": [...]}` (at most 100 events, oldest first) signed with the ' +
  'stream\'s secret: header `Gatehouse-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. A 2xx ' +
  'answer moves the stream on; anything else (or no answer within 5 s) is retried with the same events, after 1 s, ' +
  '2 s, 4 s ... (at most 10 minutes), and after 10 failures in a row the stream is paused with the reason in ' +
  '`paused_reason` (PATCH `status: active` resumes it where it stopped). Delivery is at least once and in order per ' +
  'stream: a receiver should drop an event id it has seen. docs/events.md, "Streams".';

/** Log streams: `/log-streams`, one controller class per presentation. */
export function logStreamsController(v: ApiVersion): Type<unknown> {
  const P = new Presenter(v, logStreamSpecs[v], shapeLogStream(v));

  @ApiTags(`Log Streams (${v})`)
  @Controller(routeOf(v, 'log-streams'))
  class LogStreamsController {
    constructor(@Inject(LogStreamsService) private readonly svc: LogStreamsService) {}

    @Get()
    @Scopes(LOG_STREAMS_READ)
    @ApiOperation({ summary: 'Get log streams', description: `Never with the secret. ${REACH}` })
    @ApiListQuery(v)
    @ApiCollection(LogStreamDoc, v)
    @ApiErrorResponses()
    async list(@CallerAccess() a: Access, @Query() query: QueryParams) {
      return P.page(await this.svc.list(a, P.list(query)));
    }

    @Post()
    @Scopes(LOG_STREAMS_WRITE)
    @ApiOperation({
      summary: 'Create a log stream',
      description:
        'A webhook that receives the events of the instance (or of `tenant_id` only) from now on, of `event_types` ' +
        '(all when empty). `secret` signs the deliveries (made when absent; sealed at rest; answered by this ' +
        `operation only). The URL answers to the same outbound policy as identity providers. ${DELIVERY} ${REACH}`,
    })
    @ApiReadQuery()
    @ApiBody({ type: CreateLogStreamDto })
    @ApiRecord(LogStreamDoc, 201)
    @ApiErrorResponses(400, 409)
    async create(
      @CallerAccess() a: Access,
      @ValidBody(CreateLogStreamDto) body: CreateLogStreamDto,
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      return P.one(await this.svc.create(a, body), read);
    }

    @Get(':stream_id')
    @Scopes(LOG_STREAMS_READ)
    @ApiOperation({
      summary: 'Get a log stream',
      description: `Its state: \`status\`, \`failures\`, \`last_error\`, \`paused_reason\`, \`last_delivered_at\`. ${REACH}`,
    })
    @ApiUuidParams('stream_id')
    @ApiReadQuery()
    @ApiRecord(LogStreamDoc, 200)
    @ApiErrorResponses(400, 404)
    async get(@CallerAccess() a: Access, @UuidParam('stream_id') id: string, @Query() query: QueryParams) {
      const read = P.read(query);
      return P.one(await this.svc.get(a, id), read);
    }

    @Patch(':stream_id')
    @Scopes(LOG_STREAMS_WRITE)
    @ApiOperation({
      summary: 'Modify a log stream',
      description:
        'Fields not given keep their value. `status: paused` stops deliveries (the events wait); `status: active` ' +
        `resumes from where the stream stopped and forgets its failures. \`secret\` replaces the secret and is not answered. ${REACH}`,
    })
    @ApiUuidParams('stream_id')
    @ApiReadQuery()
    @ApiBody({ type: UpdateLogStreamDto })
    @ApiRecord(LogStreamDoc, 200)
    @ApiErrorResponses(400, 404, 409)
    async update(
      @CallerAccess() a: Access,
      @UuidParam('stream_id') id: string,
      @ValidBody(UpdateLogStreamDto) body: UpdateLogStreamDto,
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      return P.one(await this.svc.update(a, id, body), read);
    }

    @Delete(':stream_id')
    @Scopes(LOG_STREAMS_WRITE)
    @HttpCode(204)
    @ApiOperation({ summary: 'Delete a log stream', description: `Deliveries stop. ${REACH}` })
    @ApiUuidParams('stream_id')
    @ApiNoContent('Deleted')
    @ApiErrorResponses(400, 404)
    async remove(@CallerAccess() a: Access, @UuidParam('stream_id') id: string): Promise<void> {
      await this.svc.remove(a, id);
    }
  }
  return versioned(LogStreamsController, 'LogStreams', v);
}
