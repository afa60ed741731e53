import type pg from 'pg';

/** Connections a statement failed on without a server error (socket gone): destroyed, not pooled again. */
export const broken = new WeakSet<pg.PoolClient>();

/**
 * A connection from the pool, with an 'error' listener while it is checked out: a connection that dies while checked
 * out (a server restart while a transaction awaits other work) emits 'error' on its client, which would crash the
 * process without a listener (the pool listens only while a client is idle). It is then marked broken, its next
 * statement fails (a 503), and `release` destroys it. The listener is attached inside the pool's callback, in the
 * same tick the pool hands the client over: a new connection's "terminating connection" message can arrive in the
 * same network read as its startup's end, before an `await pool.connect()` would resume. Every checkout of the data
 * layer goes through here (transactions, connections, prepared reads).
 */
export function checkout(pool: pg.Pool): Promise<{ client: pg.PoolClient; release: (err?: Error) => void }> {
  return new Promise((resolve, reject) => {
    pool.connect((err, client) => {
      if (err || !client) {
        reject(err ?? new Error('no connection'));
        return;
      }
      const onError = () => broken.add(client);
      client.on('error', onError);
      resolve({
        client,
        release: (e?: Error) => {
          client.removeListener('error', onError);
          client.release(e ?? (broken.has(client) ? new Error('connection broken') : undefined));
        },
      });
    });
  });
}
