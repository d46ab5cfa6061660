import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  /** The message as it arrived (headers and body, CRLF line ends). */
  raw: string;
  /** The name the client gave in EHLO. */
  ehlo: string;
}

/**
 * A real SMTP server on a local port that keeps every message it accepts. Mailboxes decide the
 * answer: `bounce@…` is refused for good (550), `busy@…` for now (451), any other is accepted.
 */
export async function startSmtpSink(): Promise<{
  port: number;
  received: ReceivedMail[];
  close(): Promise<void>;
}> {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (address.address.startsWith('bounce@')) {
        return callback(Object.assign(new Error('5.1.1 No such user'), { responseCode: 550 }));
      }
      if (address.address.startsWith('busy@')) {
        return callback(Object.assign(new Error('4.2.1 Try again later'), { responseCode: 451 }));
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
          ehlo: session.hostNameAppearsAs,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.server.address() as { port: number }).port,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
