import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthDoc } from '../common/responses.dto.js';
import { Scopes } from '@gatehouse/bearer';
import { ApiErrorResponses } from '@gatehouse/http';
import { asIs, Presenter } from '@gatehouse/query';
import { ApiReadQuery } from '../common/openapi.js';
import { READ } from '../common/scopes.js';
import { HealthService, healthSpec, type HealthRecord } from './health.service.js';

const P = new Presenter<HealthRecord>('v1', healthSpec, asIs);

@ApiTags('Health')
@Controller('api/v1/health')
export class TreeHealthController {
  constructor(private readonly health: HealthService) {}

  @Get()
  @Scopes(READ)
  @ApiOkResponse({ type: HealthDoc })
  @ApiOperation({
    summary: 'Health check',
    description:
      '`server_status`: `Active`; `Warning` when the token server cannot be reached (a token still in the cache ' +
      'is accepted); `Error` when the database cannot be reached. `server_version` is the package version. ' +
      'Unauthenticated probes: `/livez`, `/readyz`.',
  })
  @ApiReadQuery()
  @ApiErrorResponses(400)
  async check(@Query() q: Record<string, unknown>) {
    const read = P.read(q);
    return P.one(await this.health.check(), read);
  }
}
