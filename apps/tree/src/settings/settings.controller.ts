import { Body, Controller, Get, Patch, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { SettingsDoc } from '../common/responses.dto.js';
import { Scopes } from '@gatehouse/bearer';
import { ApiErrorResponses } from '@gatehouse/http';
import type { Actor } from '../common/actor.js';
import { ApiReadQuery } from '../common/openapi.js';
import { CurrentActor } from '../common/request.js';
import { READ, SETTINGS_WRITE } from '../common/scopes.js';
import { UpdateSettingsDto } from './dto/settings.dto.js';
import { SettingsService } from './settings.service.js';

@ApiTags('Settings')
@Controller('api/v1/settings')
export class SettingsController {
  constructor(private readonly settings: SettingsService) {}

  @Get()
  @Scopes(READ)
  @ApiOkResponse({ type: SettingsDoc })
  @ApiOperation({ summary: 'Get Settings', description: 'Needs `trees:read`.' })
  @ApiReadQuery()
  @ApiErrorResponses(400)
  get(@Query() q: Record<string, unknown>) {
    return this.settings.get(q);
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
  update(@Body() dto: UpdateSettingsDto, @CurrentActor() actor: Actor, @Query() q: Record<string, unknown>) {
    return this.settings.update(dto, actor, q);
  }
}
