import { Controller, Delete, Get, HttpCode, Inject, Patch, Post, Query, type Type } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Scopes } from '@gatehouse/bearer';
import { ApiErrorResponses, ApiUuidParams, UuidParam } from '@gatehouse/http';
import { CallerAccess, type Access } from './access.js';
import { ValidBody } from './body.js';
import type { NamedBody } from './named-dto.js';
import { versioned, type QueryParams } from './controller.js';
import type { NamedInput, NamedKind, NamedRecord, NamedRow } from './named-records.js';
import { namedSpecs, shapeNamed } from './named-records.js';
import type { NamedService } from './named.service.js';
import { ApiCollection, ApiListQuery, ApiNoContent, ApiReadQuery, ApiRecord } from './openapi.js';
import { Presenter } from '@gatehouse/query';
import { routeOf, type ApiVersion } from './version.js';

export interface NamedControllerOptions {
  kind: NamedKind<NamedRow>;
  /** Injection token of the kind's NamedService. */
  service: symbol;
  read: string;
  write: string;
  tag: string;
  createDto: Type<NamedBody>;
  updateDto: Type<NamedBody>;
  doc: Record<ApiVersion, Type<unknown>>;
  /** What delete does beyond the record (documented on the operation). */
  deleteNote: string;
}

/** The body's fields in canonical names. */
function input(noun: NamedKind<NamedRow>['noun'], body: NamedBody): NamedInput {
  return {
    name: body[`${noun}_name`],
    description: body[`${noun}_description`],
    app_metadata: body.app_metadata,
    tenant_id: body.tenant_id,
  };
}

/** `/<path>` and `/<path>/:id` of a named record kind (roles, groups), one controller class per presentation. */
export function namedController(v: ApiVersion, o: NamedControllerOptions): Type<unknown> {
  const P = new Presenter<NamedRecord>(v, namedSpecs(o.kind)[v], shapeNamed(o.kind, v));
  const idParam = `${o.kind.noun}_id`;
  const noun = o.kind.noun;

  @ApiTags(`${o.tag} (${v})`)
  @Controller(routeOf(v, o.kind.path))
  class NamedController {
    constructor(@Inject(o.service) private readonly svc: NamedService) {}

    @Get()
    @Scopes(o.read)
    @ApiOperation({ summary: `Get ${o.kind.path}`, description: `The ${o.kind.path} the caller reaches.` })
    @ApiListQuery(v)
    @ApiCollection(o.doc[v], v)
    async list(@CallerAccess() a: Access, @Query() query: QueryParams) {
      return P.page(await this.svc.list(a, P.list(query)));
    }

    @Post()
    @Scopes(o.write)
    @ApiOperation({
      summary: `Create a ${noun}`,
      description:
        `A ${noun}_name taken in the tenant (or among global ${o.kind.path}): 409. A caller that is not global ` +
        `creates in its own tenant; a global one may name a tenant of the instance (tenant_id) or none.`,
    })
    @ApiReadQuery()
    @ApiBody({ type: o.createDto })
    @ApiRecord(o.doc[v], 201)
    @ApiErrorResponses(400, 403, 409)
    async create(
      @CallerAccess() a: Access,
      @ValidBody(o.createDto) body: NamedBody,
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      return P.one(await this.svc.create(a, input(noun, body), read), read);
    }

    @Get(`:${idParam}`)
    @Scopes(o.read)
    @ApiOperation({ summary: `Get a ${noun}` })
    @ApiUuidParams(idParam)
    @ApiReadQuery()
    @ApiRecord(o.doc[v], 200)
    @ApiErrorResponses(400, 404)
    async get(@CallerAccess() a: Access, @UuidParam(idParam) id: string, @Query() query: QueryParams) {
      const read = P.read(query);
      return P.one(await this.svc.get(a, id, read), read);
    }

    @Patch(`:${idParam}`)
    @Scopes(o.write)
    @ApiOperation({
      summary: `Modify a ${noun}`,
      description: `Fields not given keep their value; the tenant is set at creation only. A taken name: 409.`,
    })
    @ApiUuidParams(idParam)
    @ApiReadQuery()
    @ApiBody({ type: o.updateDto })
    @ApiRecord(o.doc[v], 200)
    @ApiErrorResponses(400, 404, 409)
    async update(
      @CallerAccess() a: Access,
      @UuidParam(idParam) id: string,
      @ValidBody(o.updateDto) body: NamedBody,
      @Query() query: QueryParams,
    ) {
      const read = P.read(query);
      return P.one(await this.svc.update(a, id, input(noun, body), read), read);
    }

    @Delete(`:${idParam}`)
    @Scopes(o.write)
    @HttpCode(204)
    @ApiOperation({ summary: `Delete a ${noun}`, description: o.deleteNote })
    @ApiUuidParams(idParam)
    @ApiNoContent('Deleted')
    @ApiErrorResponses(400, 404)
    async remove(@CallerAccess() a: Access, @UuidParam(idParam) id: string): Promise<void> {
      await this.svc.remove(a, id);
    }
  }
  return versioned(NamedController, o.tag.replace(/\s/g, ''), v);
}
