import { SMTPServer } from 'smtp-server';

/** A message a {@link smtpSink} received: envelope sender, recipients (comma-joined) and the raw message. */
export interface SunkMail {
  from: string;
  to: string;
  body: string;
}

/**
 * A real local SMTP server standing for the mail provider in tests (no TLS, no authentication): every message it
 * accepts is pushed onto `into`. Recipients matching `refuse` are refused with a permanent 550, as a mailbox that
 * does not exist is. Listen on it yourself (`listen(port, '127.0.0.1', cb)`), and close it when done.
 */
export function smtpSink(into: SunkMail[], opts: { refuse?: RegExp } = {}): SMTPServer {
  return new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, done) {
      done(opts.refuse?.test(address.address) ? new Error('mailbox unavailable') : undefined);
    },
    onData(stream, session, done) {
      let body = '';
      stream.on('data', (d: Buffer) => (body += d.toString('utf8')));
      stream.on('end', () => {
        into.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address).join(','),
          body,
        });
        done();
      });
    },
  });
}
