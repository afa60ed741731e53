import { uniqueConflict as dbUniqueConflict, type Sql } from '@gatehouse/db';

/**
 * What the tree adds to the data layer (`@gatehouse/db`): the statement timeout of bulk work, and the names of the
 * unique constraints of node partitions.
 *
 * statement_timeout for the rest of the current transaction, for bulk work whose size is bounded otherwise (a
 * version clone, a CSV import of at most TREE_IMPORT_MAX_ROWS lines): 1.1 M nodes take tens of seconds, longer than
 * the pool's DB_STATEMENT_TIMEOUT_MS.
 */
export const BULK_STATEMENT_TIMEOUT = '10min';

export async function allowBulkStatements(sql: Sql): Promise<void> {
  await sql.exec(`SET LOCAL statement_timeout = '${BULK_STATEMENT_TIMEOUT}'`);
}

/**
 * A unique violation in a partition of tree_nodes names the partition's index (`tree_nodes_<version>_code_key`,
 * migrations 1790000300000 and 1790000700000); it is reported under the name the parent's constraint had
 * (`uq_tree_nodes_code`), which the messages are keyed by.
 */
const PARTITION_UNIQUE = /^tree_nodes_[0-9a-f]{32}_(code|path)_key$/;

/** A named unique violation (of a tree table or a node partition) as a 409; any other error unchanged. */
export function uniqueConflict(err: unknown, messages: Record<string, string>): unknown {
  return dbUniqueConflict(err, messages, (c) => c.replace(PARTITION_UNIQUE, 'uq_tree_nodes_$1'));
}
