import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Param,
  Patch,
  Post,
  Query,
  StreamableFile,
} from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { Scopes } from '@gatehouse/bearer';
import { ApiErrorResponses, ApiUuidParams } from '@gatehouse/http';
import { asIs, Presenter } from '@gatehouse/query';
import type { Actor } from '../common/actor.js';
import type { InstanceKey } from '../common/instance.js';
import type { Language } from '../common/language.js';
import { ApiListQuery, ApiReadQuery } from '../common/openapi.js';
import { ApiCollection, NodeDoc } from '../common/responses.dto.js';
import { booleanQuery, NodeIdParam } from '../common/params.js';
import { AcceptLanguage, CurrentActor, CurrentInstance } from '../common/request.js';
import { READ, WRITE } from '../common/scopes.js';
import { CloneNodeDto, CreateNodeDto, UpdateNodeDto } from './dto/node.dto.js';
import { nodeSpec, type NodeRecord } from './node.record.js';
import { NodesService } from './nodes.service.js';

type Q = Record<string, unknown>;

const NDJSON = 'application/x-ndjson';

const P = new Presenter<NodeRecord>('v1', nodeSpec, asIs);

@ApiTags('Tree nodes')
@Controller('api/v1/trees/:tree_code/versions/:tree_version/nodes')
export class NodesController {
  constructor(private readonly nodes: NodesService) {}

  @Get()
  @Scopes(READ)
  @ApiCollection(NodeDoc)
  @ApiOperation({
    summary: 'Get Tree Nodes',
    description: 'Default order: depth-first (each parent before its children).',
  })
  @ApiListQuery()
  async list(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @Query() q: Q,
    @AcceptLanguage() lang?: Language,
  ) {
    return P.page(await this.nodes.read.list(instance, code, version, P.list(q), lang));
  }

  @Post()
  @Scopes(WRITE)
  @ApiCreatedResponse({ type: NodeDoc })
  @ApiOperation({
    summary: 'Create Tree Node',
    description:
      'Without `parent_id`: a root (depth 0). With it: depth = parent depth + 1 and the parent stops being a leaf. ' +
      'A parent of another version (or no such node) is 400; a duplicate code in the version 409.',
  })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404, 409)
  async create(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @Body() dto: CreateNodeDto,
    @CurrentActor() actor: Actor,
    @Query() q: Q,
  ) {
    // A new node has no translation yet: Accept-Language cannot change the answer.
    const read = P.read(q);
    return P.one(await this.nodes.write.create(instance, code, version, dto, actor, read), read);
  }

  @Get(':tree_node_id')
  @ApiUuidParams('tree_node_id')
  @Scopes(READ)
  @ApiOkResponse({ type: NodeDoc })
  @ApiOperation({ summary: 'Get Tree Node' })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404)
  async get(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @NodeIdParam() id: string,
    @Query() q: Q,
    @AcceptLanguage() lang?: Language,
  ) {
    const read = P.read(q);
    return P.one(await this.nodes.read.get(instance, code, version, id, read, lang), read);
  }

  @Get(':tree_node_id/descendants')
  @ApiUuidParams('tree_node_id')
  @Scopes(READ)
  @ApiCollection(NodeDoc)
  @ApiOperation({
    summary: 'Get descendants of a node',
    description:
      'The subtree below the node (the node itself excluded), depth-first, paged like every list. With ' +
      '`Accept: application/x-ndjson` the whole subtree is streamed instead, one node per line (paging parameters ' +
      'ignored; `fields` applies), read from the database in batches by path.',
  })
  @ApiListQuery()
  @ApiProduces('application/json', NDJSON)
  async descendants(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @NodeIdParam() id: string,
    @Query() q: Q,
    @Headers('accept') accept: string | undefined,
    @AcceptLanguage() lang?: Language,
  ) {
    if (accept?.includes(NDJSON)) {
      const stream = await this.nodes.read.streamDescendants(instance, code, version, id, P.list(q), lang);
      // Errors before the first line are ordinary answers (the first batch is read eagerly); later ones cut it short.
      return new StreamableFile(stream, { type: NDJSON }).setErrorHandler((_err, res) => res.destroy?.());
    }
    return P.page(await this.nodes.read.descendants(instance, code, version, id, P.list(q), lang));
  }

  @Patch(':tree_node_id')
  @ApiUuidParams('tree_node_id')
  @Scopes(WRITE)
  @ApiOkResponse({ type: NodeDoc })
  @ApiOperation({
    summary: 'Update Tree Node',
    description:
      'Partial update. A new `parent_id` moves the whole subtree in one statement (depths follow, leaf flags of the ' +
      'old and new parent are kept right); under the node itself or its descendant: 409; `null`: becomes a root. ' +
      "The version's last root stays a root: moving it under another node is 409.",
  })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404, 409)
  async update(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @NodeIdParam() id: string,
    @Body() dto: UpdateNodeDto,
    @CurrentActor() actor: Actor,
    @Query() q: Q,
    @AcceptLanguage() lang?: Language,
  ) {
    const read = P.read(q);
    return P.one(await this.nodes.write.update(instance, code, version, id, dto, actor, read, lang), read);
  }

  @Delete(':tree_node_id')
  @ApiUuidParams('tree_node_id')
  @Scopes(WRITE)
  @HttpCode(204)
  @ApiNoContentResponse()
  @ApiOperation({
    summary: 'Delete Tree Node',
    description:
      "A node with children: 409 unless `cascade=true`, which deletes the whole subtree. The version's last root " +
      'node: 409 either way (a version keeps at least one root). 204.',
  })
  @ApiQuery({ name: 'cascade', required: false, schema: { type: 'boolean', default: false } })
  @ApiErrorResponses(400, 404, 409)
  async remove(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @NodeIdParam() id: string,
    @Query('cascade') cascade: unknown,
  ): Promise<void> {
    await this.nodes.write.remove(instance, code, version, id, booleanQuery('cascade', cascade));
  }

  @Post(':tree_node_id/clone')
  @ApiUuidParams('tree_node_id')
  @Scopes(WRITE)
  @ApiCreatedResponse({ type: NodeDoc })
  @ApiOperation({
    summary: 'Clone Tree Node',
    description:
      'Copies the node (with its translations) under `parent_id` (absent: beside the original; null: as a root). ' +
      'With `deep=true` the whole subtree is copied: the copy of the node gets `code`, every copied descendant the ' +
      'code `<original code>-copy-<n>`, n being the smallest positive integer for which none of these codes exists ' +
      'in the version yet. 201 with the new node.',
  })
  @ApiQuery({ name: 'deep', required: false, schema: { type: 'boolean', default: false } })
  @ApiReadQuery()
  @ApiErrorResponses(400, 404, 409)
  async clone(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @NodeIdParam() id: string,
    @Body() dto: CloneNodeDto,
    @Query('deep') deep: unknown,
    @CurrentActor() actor: Actor,
    @Query() q: Q,
    @AcceptLanguage() lang?: Language,
  ) {
    const copyDeep = booleanQuery('deep', deep);
    const read = P.read(q);
    return P.one(
      await this.nodes.write.clone(instance, code, version, id, dto, copyDeep, actor, read, lang),
      read,
    );
  }
}
