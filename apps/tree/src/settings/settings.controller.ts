import { Body, Controller, Get, Patch, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { SettingsDoc } from '../common/responses.dto.js';
import { Scopes } from '@gatehouse/bearer';
import { ApiErrorResponses } from '@gatehouse/http';
import { asIs, Presenter } from '@gatehouse/query';
import type { Actor } from '../common/actor.js';
import type { InstanceKey } from '../common/instance.js';
import { ApiReadQuery } from '../common/openapi.js';
import { CurrentActor, CurrentInstance } from '../common/request.js';
import { READ, SETTINGS_WRITE } from '../common/scopes.js';
import { UpdateSettingsDto } from './dto/settings.dto.js';
import { SettingsService, settingsSpec, type SettingsRecord } from './settings.service.js';

const P = new Presenter<SettingsRecord>('v1', settingsSpec, asIs);

@ApiTags('Settings')
@Controller('api/v1/settings')
export class SettingsController {
  constructor(private readonly settings: SettingsService) {}

  @Get()
  @Scopes(READ)
  @ApiOkResponse({ type: SettingsDoc })
  @ApiOperation({
    summary: 'Get Settings',
    description: "Needs `trees:read`. The settings of the caller's instance (each instance has its own).",
  })
  @ApiReadQuery()
  @ApiErrorResponses(400)
  async get(@CurrentInstance() instance: InstanceKey, @Query() q: Record<string, unknown>) {
    const read = P.read(q);
    return P.one(await this.settings.get(instance), read);
  }

  @Patch()
  @Scopes(SETTINGS_WRITE)
  @ApiOkResponse({ type: SettingsDoc })
  @ApiOperation({
    summary: 'Update Settings',
    description: 'Needs `settings:write`. `environment` absent: the default `development`.',
  })
  @ApiReadQuery()
  @ApiErrorResponses(400)
  async update(
    @CurrentInstance() instance: InstanceKey,
    @Body() dto: UpdateSettingsDto,
    @CurrentActor() actor: Actor,
    @Query() q: Record<string, unknown>,
  ) {
    const read = P.read(q);
    return P.one(await this.settings.update(instance, dto, actor), read);
  }
}
