import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { NodeReads } from './nodes.reads.js';
import { NodeWrites } from './nodes.writes.js';

export { MAX_EMBEDDED_CHILDREN, NODE_CONFLICTS, STREAM_BATCH } from './nodes.queries.js';

/**
 * Tree nodes, as the controller uses them: `read` (lists, subtrees, one node: nodes.reads.ts) and `write` (create,
 * modify and move, delete, clone, under the version lock: nodes.writes.ts), over the SQL of nodes.queries.ts.
 */
@Injectable()
export class NodesService {
  readonly read: NodeReads;
  readonly write: NodeWrites;

  constructor(@InjectDataSource() ds: DataSource) {
    this.read = new NodeReads(ds);
    this.write = new NodeWrites(ds);
  }
}
