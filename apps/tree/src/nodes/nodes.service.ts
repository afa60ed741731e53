import { Db } from '@gatehouse/db';
import { Inject, Injectable } from '@nestjs/common';
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

  constructor(@Inject(Db) db: Db) {
    this.read = new NodeReads(db);
    this.write = new NodeWrites(db);
  }
}
