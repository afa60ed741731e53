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
import { ApiCollection, TreeDoc } from '../common/responses.dto.js';
import { AcceptLanguage, CurrentActor, CurrentInstance } from '../common/request.js';
import { READ, WRITE } from '../common/scopes.js';
import { ChangeTreeCodeDto, CloneTreeDto, CreateTreeDto, UpdateTreeDto } from './dto/tree.dto.js';
import { treeSpec, type TreeRecord } from './tree.record.js';
import { TreesService } from './trees.service.js';

type Q = Record<string, unknown>;

/** Tree records are in their one presentation already: the presenter cuts them to `fields` and pages them. */
const P = new Presenter<TreeRecord>('v1', treeSpec, asIs);

@ApiTags('Trees')
@Controller('api/v1/trees')
export class TreesController {
  constructor(private readonly trees: TreesService) {}

  @Get()
  @Scopes(READ)
  @ApiCollection(TreeDoc)
  @ApiOperation({ summary: 'Get Trees', description: 'Default order: code.' })
  @ApiListQuery()
  async list(@CurrentInstance() instance: InstanceKey, @Query() q: Q, @AcceptLanguage() lang?: Language) {
    return P.page(await this.trees.list(instance, P.list(q), lang));
  }

  @Post()
  @Scopes(WRITE)
  @ApiCreatedResponse({ type: TreeDoc })
  @ApiOperation({
    summary: 'Create Tree',
    description: 'Also creates the default version `v1` with its root node (see Create Tree Version).',
  })
  @ApiReadQuery()
  @ApiErrorResponses(400, 409)
  async create(
    @CurrentInstance() instance: InstanceKey,
    @Body() dto: CreateTreeDto,
    @CurrentActor() actor: Actor,
    @Query() q: Q,
    @AcceptLanguage() lang?: Language,
  ) {
    const read = P.read(q);
    return P.one(await this.trees.create(instance, dto, actor, read, lang), read);
  }

  @Get(':tree_code')
  @Scopes(READ)
  @ApiOkResponse({ type: TreeDoc })
  @ApiOperation({ summary: 'Get Tree' })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404)
  async get(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Query() q: Q,
    @AcceptLanguage() lang?: Language,
  ) {
    const read = P.read(q);
    return P.one(await this.trees.get(instance, code, read, lang), read);
  }

  @Patch(':tree_code')
  @Scopes(WRITE)
  @ApiOkResponse({ type: TreeDoc })
  @ApiOperation({
    summary: 'Update Tree',
    description: 'Partial update; `code` changes through change-code.',
  })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404)
  async update(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Body() dto: UpdateTreeDto,
    @CurrentActor() actor: Actor,
    @Query() q: Q,
    @AcceptLanguage() lang?: Language,
  ) {
    const read = P.read(q);
    return P.one(await this.trees.update(instance, code, dto, actor, read, lang), read);
  }

  @Delete(':tree_code')
  @Scopes(WRITE)
  @HttpCode(204)
  @ApiNoContentResponse()
  @ApiOperation({
    summary: 'Delete Tree',
    description: 'Deletes every version, node and translation under it. 204.',
  })
  @ApiErrorResponses(404)
  async remove(@CurrentInstance() instance: InstanceKey, @Param('tree_code') code: string): Promise<void> {
    await this.trees.remove(instance, code);
  }

  @Post(':tree_code/clone')
  @Scopes(WRITE)
  @ApiCreatedResponse({ type: TreeDoc })
  @ApiOperation({
    summary: 'Clone Tree',
    description:
      'Deep copy under a new code: the tree and its translations, every version (same version codes) with its ' +
      'nodes (same codes, new ids) and translations. Description and metadata default to the original. 201 with the new tree.',
  })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404, 409)
  async clone(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Body() dto: CloneTreeDto,
    @CurrentActor() actor: Actor,
    @Query() q: Q,
    @AcceptLanguage() lang?: Language,
  ) {
    const read = P.read(q);
    return P.one(await this.trees.clone(instance, code, dto, actor, read, lang), read);
  }

  @Post(':tree_code/change-code')
  @Scopes(WRITE)
  @ApiOkResponse({ type: TreeDoc })
  @HttpCode(200)
  @ApiOperation({
    summary: 'Change Tree Code',
    description: 'Renames the tree; versions, nodes and translations stay attached. 200 with the tree.',
  })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404, 409)
  async changeCode(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Body() dto: ChangeTreeCodeDto,
    @CurrentActor() actor: Actor,
    @Query() q: Q,
    @AcceptLanguage() lang?: Language,
  ) {
    const read = P.read(q);
    return P.one(await this.trees.changeCode(instance, code, dto, actor, read, lang), read);
  }
}
