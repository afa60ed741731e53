import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { Scopes } from '@gatehouse/bearer';
import { ApiErrorResponses } from '@gatehouse/http';
import type { Actor } from '../common/actor.js';
import type { InstanceKey } from '../common/instance.js';
import { parseLanguageParam } from '../common/language.js';
import { ApiListQuery, ApiReadQuery } from '../common/openapi.js';
import { ApiCollection, TranslationDoc } from '../common/responses.dto.js';
import { uuidParam } from '../common/params.js';
import { CurrentActor, CurrentInstance } from '../common/request.js';
import { READ, WRITE } from '../common/scopes.js';
import { CreateTranslationDto, UpdateTranslationDto } from './dto/translation.dto.js';
import { TranslationsService, type Subject } from './translations.service.js';

type Q = Record<string, unknown>;

const CREATE_NOTE =
  '`language` defaults to `en_US`; a second translation in the same language is 409. `label_id` of a translation ' +
  'is the id of the translated record.';

@ApiTags('Translations')
@Controller('api/v1/trees/:tree_code/translations')
export class TreeTranslationsController {
  constructor(private readonly translations: TranslationsService) {}

  private subject(instance: InstanceKey, code: string): Subject {
    return { instance, kind: 'tree', treeCode: code };
  }

  @Get()
  @Scopes(READ)
  @ApiCollection(TranslationDoc)
  @ApiOperation({ summary: 'Get tree translations' })
  @ApiListQuery()
  list(@CurrentInstance() instance: InstanceKey, @Param('tree_code') code: string, @Query() q: Q) {
    return this.translations.list(this.subject(instance, code), q);
  }

  @Post()
  @Scopes(WRITE)
  @ApiCreatedResponse({ type: TranslationDoc })
  @ApiOperation({ summary: 'Create tree translation', description: CREATE_NOTE })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404, 409)
  create(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Body() dto: CreateTranslationDto,
    @CurrentActor() actor: Actor,
    @Query() q: Q,
  ) {
    return this.translations.create(this.subject(instance, code), dto, actor, q);
  }

  @Get(':language')
  @Scopes(READ)
  @ApiOkResponse({ type: TranslationDoc })
  @ApiOperation({ summary: 'Get tree translation' })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404)
  get(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('language') language: string,
    @Query() q: Q,
  ) {
    return this.translations.get(this.subject(instance, code), parseLanguageParam(language), q);
  }

  @Patch(':language')
  @Scopes(WRITE)
  @ApiOkResponse({ type: TranslationDoc })
  @ApiOperation({ summary: 'Update tree translation' })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404)
  update(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('language') language: string,
    @Body() dto: UpdateTranslationDto,
    @CurrentActor() actor: Actor,
    @Query() q: Q,
  ) {
    return this.translations.update(
      this.subject(instance, code),
      parseLanguageParam(language),
      dto,
      actor,
      q,
    );
  }

  @Delete(':language')
  @Scopes(WRITE)
  @HttpCode(204)
  @ApiNoContentResponse()
  @ApiOperation({ summary: 'Delete tree translation' })
  @ApiErrorResponses(400, 404)
  async remove(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('language') language: string,
  ): Promise<void> {
    await this.translations.remove(this.subject(instance, code), parseLanguageParam(language));
  }
}

@ApiTags('Translations')
@Controller('api/v1/trees/:tree_code/versions/:tree_version/translations')
export class VersionTranslationsController {
  constructor(private readonly translations: TranslationsService) {}

  private subject(instance: InstanceKey, code: string, version: string): Subject {
    return { instance, kind: 'version', treeCode: code, version };
  }

  @Get()
  @Scopes(READ)
  @ApiCollection(TranslationDoc)
  @ApiOperation({ summary: 'Get tree version translations' })
  @ApiListQuery()
  list(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @Query() q: Q,
  ) {
    return this.translations.list(this.subject(instance, code, version), q);
  }

  @Post()
  @Scopes(WRITE)
  @ApiCreatedResponse({ type: TranslationDoc })
  @ApiOperation({ summary: 'Create tree version translation', description: CREATE_NOTE })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404, 409)
  create(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @Body() dto: CreateTranslationDto,
    @CurrentActor() actor: Actor,
    @Query() q: Q,
  ) {
    return this.translations.create(this.subject(instance, code, version), dto, actor, q);
  }

  @Get(':language')
  @Scopes(READ)
  @ApiOkResponse({ type: TranslationDoc })
  @ApiOperation({ summary: 'Get tree version translation' })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404)
  get(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @Param('language') language: string,
    @Query() q: Q,
  ) {
    return this.translations.get(this.subject(instance, code, version), parseLanguageParam(language), q);
  }

  @Patch(':language')
  @Scopes(WRITE)
  @ApiOkResponse({ type: TranslationDoc })
  @ApiOperation({ summary: 'Update tree version translation' })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404)
  update(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @Param('language') language: string,
    @Body() dto: UpdateTranslationDto,
    @CurrentActor() actor: Actor,
    @Query() q: Q,
  ) {
    return this.translations.update(
      this.subject(instance, code, version),
      parseLanguageParam(language),
      dto,
      actor,
      q,
    );
  }

  @Delete(':language')
  @Scopes(WRITE)
  @HttpCode(204)
  @ApiNoContentResponse()
  @ApiOperation({ summary: 'Delete tree version translation' })
  @ApiErrorResponses(400, 404)
  async remove(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @Param('language') language: string,
  ): Promise<void> {
    await this.translations.remove(this.subject(instance, code, version), parseLanguageParam(language));
  }
}

@ApiTags('Translations')
@Controller('api/v1/trees/:tree_code/versions/:tree_version/nodes/:tree_node_id/translations')
export class NodeTranslationsController {
  constructor(private readonly translations: TranslationsService) {}

  private subject(instance: InstanceKey, code: string, version: string, nodeId: string): Subject {
    return { instance, kind: 'node', treeCode: code, version, nodeId: uuidParam('tree_node_id', nodeId) };
  }

  @Get()
  @Scopes(READ)
  @ApiCollection(TranslationDoc)
  @ApiOperation({ summary: 'Get tree node translations' })
  @ApiListQuery()
  list(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @Param('tree_node_id') nodeId: string,
    @Query() q: Q,
  ) {
    return this.translations.list(this.subject(instance, code, version, nodeId), q);
  }

  @Post()
  @Scopes(WRITE)
  @ApiCreatedResponse({ type: TranslationDoc })
  @ApiOperation({ summary: 'Create tree node translation', description: CREATE_NOTE })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404, 409)
  create(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @Param('tree_node_id') nodeId: string,
    @Body() dto: CreateTranslationDto,
    @CurrentActor() actor: Actor,
    @Query() q: Q,
  ) {
    return this.translations.create(this.subject(instance, code, version, nodeId), dto, actor, q);
  }

  @Get(':language')
  @Scopes(READ)
  @ApiOkResponse({ type: TranslationDoc })
  @ApiOperation({ summary: 'Get tree node translation' })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404)
  get(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @Param('tree_node_id') nodeId: string,
    @Param('language') language: string,
    @Query() q: Q,
  ) {
    return this.translations.get(
      this.subject(instance, code, version, nodeId),
      parseLanguageParam(language),
      q,
    );
  }

  @Patch(':language')
  @Scopes(WRITE)
  @ApiOkResponse({ type: TranslationDoc })
  @ApiOperation({ summary: 'Update tree node translation' })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404)
  update(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @Param('tree_node_id') nodeId: string,
    @Param('language') language: string,
    @Body() dto: UpdateTranslationDto,
    @CurrentActor() actor: Actor,
    @Query() q: Q,
  ) {
    return this.translations.update(
      this.subject(instance, code, version, nodeId),
      parseLanguageParam(language),
      dto,
      actor,
      q,
    );
  }

  @Delete(':language')
  @Scopes(WRITE)
  @HttpCode(204)
  @ApiNoContentResponse()
  @ApiOperation({ summary: 'Delete tree node translation' })
  @ApiErrorResponses(400, 404)
  async remove(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @Param('tree_node_id') nodeId: string,
    @Param('language') language: string,
  ): Promise<void> {
    await this.translations.remove(
      this.subject(instance, code, version, nodeId),
      parseLanguageParam(language),
    );
  }
}
