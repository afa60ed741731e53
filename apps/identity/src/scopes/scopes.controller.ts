import { Controller, Delete, Get, HttpCode, Inject, Patch, Post, Query, type Type } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Scopes } from '@gatehouse/bearer';
import { ApiErrorResponses, ApiUuidParams, UuidParam } from '@gatehouse/http';
import { CallerAccess } from '../common/access.js';
import type { Access } from '../common/access.js';
import { ValidBody } from '../common/body.js';
import { versioned, type QueryParams } from '../common/controller.js';
import { ApiCollection, ApiListQuery, ApiNoContent, ApiReadQuery, ApiRecord } from '../common/openapi.js';
import { Presenter } from '@gatehouse/query';
import { RESOURCES_READ, RESOURCES_WRITE } from '../common/scopes.js';
import { routeOf, type ApiVersion } from '../common/version.js';
import { ScopeDoc } from '../resources/dto/resource.docs.js';
import { CreateScopeDto, UpdateScopeDto } from './dto/scope.dto.js';
import { scopeSpecs, shapeScope } from './scope.record.js';
import { ScopesService } from './scopes.service.js';

/** Resource Scopes: `/resources/:resource_id/scopes`, one controller class per presentation. */
export function scopesController(v: ApiVersion): Type<unknown> {
  const P = new Presenter(v, scopeSpecs[v], shapeScope(v));

  @ApiTags(`Resource Scopes (${v})`)
  @Controller(routeOf(v, 'resources/:resource_id/scopes'))
  class ScopesController {
    constructor(@Inject(ScopesService) private readonly scopes: ScopesService) {}

    @Get()
    @Scopes(RESOURCES_READ)
    @ApiOperation({ summary: 'Get resource scopes' })
    @ApiUuidParams('resource_id')
    @ApiListQuery(v)
    @ApiCollection(ScopeDoc, v)
    @ApiErrorResponses(404)
    async list(
      @CallerAccess() a: Access,
      @UuidParam('resource_id') rid: string,
      @Query() query: QueryParams,
    ) {
      return P.page(await this.scopes.list(a, rid, P.list(query)));
    }

    @Post()
    @Scopes(RESOURCES_WRITE)
    @ApiOperation({
      summary: 'Create a resource scope',
      description: 'A scope_name the resource already has: 409. Scopes of a system resource: 403.',
    })
    @ApiUuidParams('resource_id')
    @ApiReadQuery()
    @ApiBody({ type: CreateScopeDto })
    @ApiRecord(ScopeDoc, 201)
    @ApiErrorResponses(400, 404, 409)
    async create(
      @CallerAccess() a: Access,
      @UuidParam('resource_id') rid: string,
      @ValidBody(CreateScopeDto) body: CreateScopeDto,
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      return P.one(await this.scopes.create(a, rid, body), read);
    }

    @Get(':scope_id')
    @Scopes(RESOURCES_READ)
    @ApiOperation({ summary: 'Get a resource scope' })
    @ApiUuidParams('resource_id', 'scope_id')
    @ApiReadQuery()
    @ApiRecord(ScopeDoc, 200)
    @ApiErrorResponses(400, 404)
    async get(
      @CallerAccess() a: Access,
      @UuidParam('resource_id') rid: string,
      @UuidParam('scope_id') sid: string,
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      return P.one(await this.scopes.get(a, rid, sid), read);
    }

    @Patch(':scope_id')
    @Scopes(RESOURCES_WRITE)
    @ApiOperation({
      summary: 'Modify a resource scope',
      description: 'The next tokens carry the new name. Scopes of a system resource: 403.',
    })
    @ApiUuidParams('resource_id', 'scope_id')
    @ApiReadQuery()
    @ApiBody({ type: UpdateScopeDto })
    @ApiRecord(ScopeDoc, 200)
    @ApiErrorResponses(400, 404, 409)
    async update(
      @CallerAccess() a: Access,
      @UuidParam('resource_id') rid: string,
      @UuidParam('scope_id') sid: string,
      @ValidBody(UpdateScopeDto) body: UpdateScopeDto,
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      return P.one(await this.scopes.update(a, rid, sid, body), read);
    }

    @Delete(':scope_id')
    @Scopes(RESOURCES_WRITE)
    @HttpCode(204)
    @ApiOperation({
      summary: 'Delete a resource scope',
      description: 'Drops the permissions granting it. Scopes of a system resource: 403.',
    })
    @ApiUuidParams('resource_id', 'scope_id')
    @ApiNoContent('Deleted')
    @ApiErrorResponses(400, 404)
    async remove(
      @CallerAccess() a: Access,
      @UuidParam('resource_id') rid: string,
      @UuidParam('scope_id') sid: string,
    ): Promise<void> {
      await this.scopes.remove(a, rid, sid);
    }
  }
  return versioned(ScopesController, 'ResourceScopes', v);
}
