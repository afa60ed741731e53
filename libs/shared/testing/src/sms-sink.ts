import http from 'node:http';

/** A text message as the token server POSTs it to `SMS_WEBHOOK_URL`. */
export interface SunkText {
  to: string;
  text: string;
}

/**
 * A real local HTTP server standing for the SMS gateway in tests: every JSON body `{"to", "text"}` POSTed to it is
 * pushed onto `into` and answered 200 (or `status()`, when given and not 200: then nothing is kept, as a gateway
 * that failed). Listen on it yourself (`listen(0, '127.0.0.1', cb)`) and close it when done.
 */
export function smsSink(into: SunkText[], opts: { status?: () => number } = {}): http.Server {
  return http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString('utf8')));
    req.on('end', () => {
      const status = opts.status?.() ?? 200;
      if (status === 200) into.push(JSON.parse(body) as SunkText);
      res.writeHead(status).end();
    });
  });
}
