import { applyDecorators, Controller, Get, Inject, Query, type Type } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Scopes } from '@gatehouse/bearer';
import { ApiErrorResponses, ApiListParams, ApiUuidParams, UuidParam } from '@gatehouse/http';
import { EVENT_TYPES } from '@gatehouse/identity-data';
import { Presenter } from '@gatehouse/query';
import { CallerAccess, type Access } from '../common/access.js';
import { versioned, type QueryParams } from '../common/controller.js';
import { ApiCollection, ApiReadQuery, ApiRecord } from '../common/openapi.js';
import { LOGS_READ } from '../common/scopes.js';
import { routeOf, type ApiVersion } from '../common/version.js';
import { LogV1Doc, LogV2Doc } from './dto/log.docs.js';
import { logSpecs, shapeLog, type LogRecord } from './log.record.js';
import { LOG_COUNT_CAP, LOG_FILTER_PARAMS, LogsService } from './logs.service.js';

const TOTAL_NOTE =
  `The total counts at most ${LOG_COUNT_CAP.toLocaleString('en')} events: a total of ` +
  `${LOG_COUNT_CAP.toLocaleString('en')} means that many or more (narrow the list with the filters for an exact ` +
  'count below the cap).';

/** The filter parameters of the event lists, named as the version names them. */
function ApiLogFilters(v: ApiVersion, withUser: boolean) {
  const names = LOG_FILTER_PARAMS[v];
  return applyDecorators(
    ApiQuery({
      name: 'type',
      required: false,
      description: `One event type or several, comma-separated (${Object.keys(EVENT_TYPES).length} types, docs/events.md); an unknown type is 400`,
      example: 'signin.failure,token.failure',
    }),
    ...(withUser
      ? [ApiQuery({ name: names.userId, required: false, schema: { type: 'string', format: 'uuid' } })]
      : []),
    ApiQuery({ name: names.clientId, required: false, schema: { type: 'string', format: 'uuid' } }),
    ApiQuery({
      name: 'from',
      required: false,
      schema: { type: 'string', format: 'date-time' },
      description: 'Events at or after this instant (ISO 8601 with a time zone, else 400)',
    }),
    ApiQuery({
      name: 'to',
      required: false,
      schema: { type: 'string', format: 'date-time' },
      description: 'Events before this instant (ISO 8601 with a time zone, else 400; after `from`)',
    }),
  );
}

/** The list parameters of the event lists: `sort` is limited to the orders an index reads; no children to expand. */
function ApiLogListQuery(v: ApiVersion) {
  return applyDecorators(
    ApiQuery({
      name: 'fields',
      required: false,
      type: String,
      description: 'Comma-separated top-level attributes to return (an unknown name is 400)',
    }),
    ApiListParams({
      q:
        "Where clause over the event's attributes, e.g. `outcome = 'failure' and ip like '10.%'` (the columns of " +
        'docs/events.md: `actor_type`, `actor_id`, `record_type`... are filterable too; dotted names reach into ' +
        '`details`). The filter parameters below are served by indexes; a `q` alone may read many events.',
      sort:
        'Default `created_at:desc` (newest first). Allowed: `created_at[:asc|:desc]`, `type[:asc|:desc]` (then ' +
        'newest first for asc, oldest first for desc), `type:asc,created_at:desc`, `type:desc,created_at:asc`; ' +
        'ties broken by id. Anything else is 400: the audit trail is only sorted in an order an index reads.',
      totalCount: v === 'v2' ? 'totalCount' : 'total_count',
      totalCountDescription: `Include the number of matching events, counted up to ${LOG_COUNT_CAP.toLocaleString('en')}`,
      errors: [400],
    }),
  );
}

const LIST_NOTE =
  'Events are read-only: they are written by the actions they record (docs/events.md). A caller that is not ' +
  "global sees only its tenant's events. Newest first. ";

/** Logs (the audit trail) and a user's logs, one controller class per presentation. */
export function logsControllers(v: ApiVersion): Type<unknown>[] {
  const P = new Presenter<LogRecord>(v, logSpecs[v], shapeLog());
  const Doc = v === 'v1' ? LogV1Doc : LogV2Doc;
  const totalNote = `${TOTAL_NOTE.replace('The total', `\`${v === 'v2' ? 'totalCount' : 'total_count'}\``)}`;

  @ApiTags(`Logs (${v})`)
  @Controller(routeOf(v, 'logs'))
  class LogsController {
    constructor(@Inject(LogsService) private readonly logs: LogsService) {}

    @Get()
    @Scopes(LOGS_READ)
    @ApiOperation({ summary: 'Get logs', description: LIST_NOTE + totalNote })
    @ApiLogListQuery(v)
    @ApiLogFilters(v, true)
    @ApiCollection(Doc, v)
    async list(@CallerAccess() access: Access, @Query() query: QueryParams) {
      return P.page(await this.logs.list(access, P.list(query)));
    }

    @Get(':log_id')
    @Scopes(LOGS_READ)
    @ApiOperation({
      summary: 'Get a log event',
      description:
        "An unknown id, another instance's event or (for a caller that is not global) another tenant's: 404.",
    })
    @ApiUuidParams('log_id')
    @ApiReadQuery()
    @ApiRecord(Doc, 200)
    @ApiErrorResponses(400, 404)
    async get(@CallerAccess() access: Access, @UuidParam('log_id') id: string, @Query() query: QueryParams) {
      const read = P.read(query);
      return P.one(await this.logs.get(access, id), read);
    }
  }

  @ApiTags(`Logs (${v})`)
  @Controller(routeOf(v, 'users'))
  class UserLogsController {
    constructor(@Inject(LogsService) private readonly logs: LogsService) {}

    @Get(':user_id/logs')
    @Scopes(LOGS_READ)
    @ApiOperation({
      summary: "Get a user's logs",
      description:
        'The events about the user (`user_id`), with the parameters of Get logs. A user not in the caller’s scope: ' +
        `404. ${totalNote}`,
    })
    @ApiUuidParams('user_id')
    @ApiLogListQuery(v)
    @ApiLogFilters(v, false)
    @ApiCollection(Doc, v)
    @ApiErrorResponses(400, 404)
    async list(
      @CallerAccess() access: Access,
      @UuidParam('user_id') userId: string,
      @Query() query: QueryParams,
    ) {
      return P.page(await this.logs.listOfUser(access, userId, P.list(query)));
    }
  }
  return [versioned(LogsController, 'Logs', v), versioned(UserLogsController, 'UserLogs', v)];
}
