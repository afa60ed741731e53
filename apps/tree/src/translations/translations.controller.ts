import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { Scopes } from '@gatehouse/bearer';
import { ApiErrorResponses, ApiUuidParams } from '@gatehouse/http';
import { Presenter, asIs } from '@gatehouse/query';
import type { Actor } from '../common/actor.js';
import type { InstanceKey } from '../common/instance.js';
import { parseLanguageParam } from '../common/language.js';
import { ApiListQuery, ApiReadQuery } from '../common/openapi.js';
import { ApiCollection, TranslationDoc } from '../common/responses.dto.js';
import { NodeIdParam } from '../common/params.js';
import { CurrentActor, CurrentInstance } from '../common/request.js';
import { READ, WRITE } from '../common/scopes.js';
import { CreateTranslationDto, UpdateTranslationDto } from './dto/translation.dto.js';
import { translationSpec, type TranslationRecord } from './translation.record.js';
import { TranslationsService, type Subject } from './translations.service.js';

type Q = Record<string, unknown>;

const P = new Presenter<TranslationRecord>('v1', translationSpec, asIs);

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
  async list(@CurrentInstance() instance: InstanceKey, @Param('tree_code') code: string, @Query() q: Q) {
    return P.page(await this.translations.list(this.subject(instance, code), P.list(q)));
  }

  @Post()
  @Scopes(WRITE)
  @ApiCreatedResponse({ type: TranslationDoc })
  @ApiOperation({ summary: 'Create tree translation', description: CREATE_NOTE })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404, 409)
  async create(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Body() dto: CreateTranslationDto,
    @CurrentActor() actor: Actor,
    @Query() q: Q,
  ) {
    const read = P.read(q);
    return P.one(await this.translations.create(this.subject(instance, code), dto, actor), read);
  }

  @Get(':language')
  @Scopes(READ)
  @ApiOkResponse({ type: TranslationDoc })
  @ApiOperation({ summary: 'Get tree translation' })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404)
  async get(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('language') language: string,
    @Query() q: Q,
  ) {
    const lang = parseLanguageParam(language);
    const read = P.read(q);
    return P.one(await this.translations.get(this.subject(instance, code), lang), read);
  }

  @Patch(':language')
  @Scopes(WRITE)
  @ApiOkResponse({ type: TranslationDoc })
  @ApiOperation({ summary: 'Update tree translation' })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404)
  async update(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('language') language: string,
    @Body() dto: UpdateTranslationDto,
    @CurrentActor() actor: Actor,
    @Query() q: Q,
  ) {
    const lang = parseLanguageParam(language);
    const read = P.read(q);
    return P.one(await this.translations.update(this.subject(instance, code), lang, dto, actor), read);
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
  async list(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @Query() q: Q,
  ) {
    return P.page(await this.translations.list(this.subject(instance, code, version), P.list(q)));
  }

  @Post()
  @Scopes(WRITE)
  @ApiCreatedResponse({ type: TranslationDoc })
  @ApiOperation({ summary: 'Create tree version translation', description: CREATE_NOTE })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404, 409)
  async create(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @Body() dto: CreateTranslationDto,
    @CurrentActor() actor: Actor,
    @Query() q: Q,
  ) {
    const read = P.read(q);
    return P.one(await this.translations.create(this.subject(instance, code, version), dto, actor), read);
  }

  @Get(':language')
  @Scopes(READ)
  @ApiOkResponse({ type: TranslationDoc })
  @ApiOperation({ summary: 'Get tree version translation' })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404)
  async get(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @Param('language') language: string,
    @Query() q: Q,
  ) {
    const lang = parseLanguageParam(language);
    const read = P.read(q);
    return P.one(await this.translations.get(this.subject(instance, code, version), lang), read);
  }

  @Patch(':language')
  @Scopes(WRITE)
  @ApiOkResponse({ type: TranslationDoc })
  @ApiOperation({ summary: 'Update tree version translation' })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404)
  async update(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @Param('language') language: string,
    @Body() dto: UpdateTranslationDto,
    @CurrentActor() actor: Actor,
    @Query() q: Q,
  ) {
    const lang = parseLanguageParam(language);
    const read = P.read(q);
    return P.one(
      await this.translations.update(this.subject(instance, code, version), lang, dto, actor),
      read,
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
    return { instance, kind: 'node', treeCode: code, version, nodeId };
  }

  @Get()
  @Scopes(READ)
  @ApiCollection(TranslationDoc)
  @ApiUuidParams('tree_node_id')
  @ApiOperation({ summary: 'Get tree node translations' })
  @ApiListQuery()
  async list(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @NodeIdParam() nodeId: string,
    @Query() q: Q,
  ) {
    return P.page(await this.translations.list(this.subject(instance, code, version, nodeId), P.list(q)));
  }

  @Post()
  @Scopes(WRITE)
  @ApiCreatedResponse({ type: TranslationDoc })
  @ApiUuidParams('tree_node_id')
  @ApiOperation({ summary: 'Create tree node translation', description: CREATE_NOTE })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404, 409)
  async create(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @NodeIdParam() nodeId: string,
    @Body() dto: CreateTranslationDto,
    @CurrentActor() actor: Actor,
    @Query() q: Q,
  ) {
    const read = P.read(q);
    return P.one(
      await this.translations.create(this.subject(instance, code, version, nodeId), dto, actor),
      read,
    );
  }

  @Get(':language')
  @Scopes(READ)
  @ApiOkResponse({ type: TranslationDoc })
  @ApiUuidParams('tree_node_id')
  @ApiOperation({ summary: 'Get tree node translation' })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404)
  async get(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @NodeIdParam() nodeId: string,
    @Param('language') language: string,
    @Query() q: Q,
  ) {
    const lang = parseLanguageParam(language);
    const read = P.read(q);
    return P.one(await this.translations.get(this.subject(instance, code, version, nodeId), lang), read);
  }

  @Patch(':language')
  @Scopes(WRITE)
  @ApiOkResponse({ type: TranslationDoc })
  @ApiUuidParams('tree_node_id')
  @ApiOperation({ summary: 'Update tree node translation' })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404)
  async update(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @NodeIdParam() nodeId: string,
    @Param('language') language: string,
    @Body() dto: UpdateTranslationDto,
    @CurrentActor() actor: Actor,
    @Query() q: Q,
  ) {
    const lang = parseLanguageParam(language);
    const read = P.read(q);
    return P.one(
      await this.translations.update(this.subject(instance, code, version, nodeId), lang, dto, actor),
      read,
    );
  }

  @Delete(':language')
  @Scopes(WRITE)
  @HttpCode(204)
  @ApiNoContentResponse()
  @ApiUuidParams('tree_node_id')
  @ApiOperation({ summary: 'Delete tree node translation' })
  @ApiErrorResponses(400, 404)
  async remove(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @NodeIdParam() nodeId: string,
    @Param('language') language: string,
  ): Promise<void> {
    await this.translations.remove(
      this.subject(instance, code, version, nodeId),
      parseLanguageParam(language),
    );
  }
}
