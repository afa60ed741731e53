import { Controller, Get, HttpCode, HttpException, Param, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Scopes } from '@gatehouse/bearer';
import { ApiErrorResponses } from '@gatehouse/http';
import type { Actor } from '../common/actor.js';
import type { InstanceKey } from '../common/instance.js';
import { isCsvUpload } from '../common/csv-upload.js';
import { booleanQuery } from '../common/params.js';
import { CurrentActor, CurrentInstance } from '../common/request.js';
import { READ, WRITE } from '../common/scopes.js';
import { sendStream } from '../common/stream.js';
import { ImportResultDoc } from '../common/responses.dto.js';
import { CsvService } from './csv.service.js';

const FORMAT =
  'Format (RFC 4180, UTF-8): header `code,parent_code,name,description` plus optional `name@<lang>` / ' +
  '`description@<lang>` pairs (`en_US`, `en_UK`, `mn_MN`) holding node translations; one node per line; ' +
  '`parent_code` empty for a root. Metadata and `enabled` are not part of the format. A value starting (after ' +
  "any apostrophes) with `=`, `+`, `-`, `@`, a tab or a carriage return is exported with one leading `'` (no " +
  "spreadsheet runs it as a formula: OWASP, CSV injection); import drops one leading `'` before such a value, so an " +
  "export imports back exactly (`'=x` is read as `=x`; a lone leading `'`, as in `'abc`, is kept).";

@ApiTags('CSV exchange')
@Controller('api/v1/trees/:tree_code/versions/:tree_version')
export class CsvController {
  constructor(private readonly csv: CsvService) {}

  @Get('export')
  @Scopes(READ)
  @ApiOperation({
    summary: 'Export a version as CSV',
    description: `${FORMAT} Lines come parents first (depth-first, siblings in creation order), streamed from one consistent snapshot.`,
  })
  @ApiProduces('text/csv')
  @ApiOkResponse({
    description: 'The version as CSV (header line, then one node per line)',
    content: { 'text/csv': { schema: { type: 'string' } } },
  })
  @ApiErrorResponses(404)
  async export(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @Res() res: Response,
  ) {
    const stream = await this.csv.export(instance, code, version);
    await sendStream(res, stream, 'text/csv; charset=utf-8', `${code}-${version}.csv`);
  }

  @Post('import')
  @Scopes(WRITE)
  @HttpCode(200)
  @ApiOkResponse({ type: ImportResultDoc })
  @ApiOperation({
    summary: 'Import nodes from CSV',
    description:
      `${FORMAT} Send \`Content-Type: text/csv\`; the body is streamed, not buffered. All or nothing: any problem ` +
      '(malformed line, duplicate code, code already in the version, unknown parent_code, cycle) answers 400 ' +
      'with `details` naming each line (`field: "line 12"`, up to 100), and nothing is written. Lines may come ' +
      'in any order; `parent_code` may name a node already in the version. `replace=true` deletes the ' +
      "version's nodes first, in the same transaction; a file without nodes is then 400 (it would leave the " +
      'version without a root node). A new version holds its own root (coded as the tree): to load a whole ' +
      'export into it, use `replace=true`. Answers `{imported, replaced, nodes}`.',
  })
  @ApiConsumes('text/csv')
  @ApiBody({
    schema: {
      type: 'string',
      example: 'code,parent_code,name,description,name@mn_MN\nA,,Assets,,Хөрөнгө\nA1,A,Cash,,Бэлэн мөнгө\n',
    },
  })
  @ApiQuery({ name: 'replace', required: false, schema: { type: 'boolean', default: false } })
  @ApiErrorResponses(400, 404, 413, 415)
  async import(
    @CurrentInstance() instance: InstanceKey,
    @Param('tree_code') code: string,
    @Param('tree_version') version: string,
    @Query('replace') replace: unknown,
    @CurrentActor() actor: Actor,
    @Req() req: Request,
  ) {
    const doReplace = booleanQuery('replace', replace);
    if (!isCsvUpload(req)) throw new HttpException('Send the nodes as Content-Type: text/csv', 415);
    return this.csv.import(instance, code, version, req, actor, doReplace);
  }
}
