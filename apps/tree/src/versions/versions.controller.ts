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
import { asIs, Presenter } from '@gatehouse/query';
import type { Actor } from '../common/actor.js';
import type { InstanceKey } from '../common/instance.js';
import type { Language } from '../common/language.js';
import { ApiListQuery, ApiReadQuery } from '../common/openapi.js';
import { ApiCollection, VersionDoc } from '../common/responses.dto.js';
import { AcceptLanguage, CurrentActor, CurrentInstance } from '../common/request.js';
import { READ, WRITE } from '../common/scopes.js';
import {
  ChangeVersionCodeDto,
  CloneVersionDto,
  CreateVersionDto,
  UpdateVersionDto,
} from './dto/version.dto.js';
import { versionSpec, type VersionRecord } from './version.record.js';
import { VersionsService } from './versions.service.js';

type Q = Record<string, unknown>;

const P = new Presenter<VersionRecord>('v1', versionSpec, asIs);

@ApiTags('Tree versions')
@Controller('api/v1/trees/:tree_code/versions')
export class VersionsController {
  constructor(private readonly versions: VersionsService) {}

  @Get()
  @Scopes(READ)
  @ApiCollection(VersionDoc)
  @ApiOperation({ summary: 'Get Tree Versions', description: 'Default order: creation time.' })
  @ApiListQuery()
  async list(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Query() q: Q,
    @AcceptLanguage() lang?: Language,
  ) {
    return P.page(await this.versions.list(instance, code, P.list(q), lang));
  }

  @Post()
  @Scopes(WRITE)
  @ApiCreatedResponse({ type: VersionDoc })
  @ApiOperation({
    summary: 'Create Tree Version',
    description:
      'Creates a version with its root node (a version always has at least one): code, name and description of ' +
      "the tree as it is now, and the tree's translations as the node's. Without `version` the code is the next " +
      'free `vN`: one above the highest existing ' +
      '`v<number>` code of the tree (`v1` when there is none), so a deleted version code is not handed out again ' +
      'while a higher one exists.',
  })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404, 409)
  async create(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Body() dto: CreateVersionDto,
    @CurrentActor() actor: Actor,
    @Query() q: Q,
    @AcceptLanguage() lang?: Language,
  ) {
    const read = P.read(q);
    return P.one(await this.versions.create(instance, code, dto, actor, read, lang), read);
  }

  @Get(':tree_version')
  @Scopes(READ)
  @ApiOkResponse({ type: VersionDoc })
  @ApiOperation({
    summary: 'Get Tree Version',
    description:
      '`aggregations.levels` is the number of depth levels (max depth + 1), `nodes` the node count.',
  })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404)
  async get(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @Query() q: Q,
    @AcceptLanguage() lang?: Language,
  ) {
    const read = P.read(q);
    return P.one(await this.versions.get(instance, code, version, read, lang), read);
  }

  @Patch(':tree_version')
  @Scopes(WRITE)
  @ApiOkResponse({ type: VersionDoc })
  @ApiOperation({
    summary: 'Update Tree Version',
    description: 'Partial update; the code changes through change-code.',
  })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404)
  async update(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @Body() dto: UpdateVersionDto,
    @CurrentActor() actor: Actor,
    @Query() q: Q,
    @AcceptLanguage() lang?: Language,
  ) {
    const read = P.read(q);
    return P.one(await this.versions.update(instance, code, version, dto, actor, read, lang), read);
  }

  @Delete(':tree_version')
  @Scopes(WRITE)
  @HttpCode(204)
  @ApiNoContentResponse()
  @ApiOperation({
    summary: 'Delete Tree Version',
    description:
      'Deletes the version with all its nodes and translations. 204. The only version of a tree: 409.',
  })
  @ApiErrorResponses(404, 409)
  async remove(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
  ): Promise<void> {
    await this.versions.remove(instance, code, version);
  }

  @Post(':tree_version/clone')
  @Scopes(WRITE)
  @ApiCreatedResponse({ type: VersionDoc })
  @ApiOperation({
    summary: 'Clone Tree Version',
    description:
      'Copies the version under a new version code in the same tree: every node (same codes and structure, new ids) ' +
      'and the translations of the version and its nodes. 201 with the new version.',
  })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404, 409)
  async clone(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @Body() dto: CloneVersionDto,
    @CurrentActor() actor: Actor,
    @Query() q: Q,
    @AcceptLanguage() lang?: Language,
  ) {
    const read = P.read(q);
    return P.one(await this.versions.clone(instance, code, version, dto, actor, read, lang), read);
  }

  @Post(':tree_version/change-code')
  @Scopes(WRITE)
  @ApiOkResponse({ type: VersionDoc })
  @HttpCode(200)
  @ApiOperation({
    summary: 'Change Tree Version Code',
    description: 'Renames the version; nodes stay attached. 200.',
  })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404, 409)
  async changeCode(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @Body() dto: ChangeVersionCodeDto,
    @CurrentActor() actor: Actor,
    @Query() q: Q,
    @AcceptLanguage() lang?: Language,
  ) {
    const read = P.read(q);
    return P.one(await this.versions.changeCode(instance, code, version, dto, actor, read, lang), read);
  }
}
