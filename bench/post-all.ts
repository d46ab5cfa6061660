import { connect, type Socket } from 'node:net';

export interface PostAllOptions {
  /** `http://host:port/path` */
  url: string;
  connections: number;
  amount: number;
  /** Extra request headers (credentials), the same on every request. */
  headers?: Record<string, string>;
  /** The JSON body of each request, built when it is sent. */
  body(): string;
  /** Each answer's status and body; the first answer it refuses (false) stops the run with an error. */
  check(status: number, body: string): boolean;
  /** Called with each answer as it comes. */
  onAnswer?(): void;
}

/**
 * POSTs `amount` JSON bodies over `connections` keep-alive HTTP/1.1 connections, one request at a
 * time on each, and hands every answer to `check`. The load generator of notify-deliver shares the
 * two cores with the system it measures, so it is kept to the least work a client can do: one
 * write per request, answers cut by `content-length` (the app always sends it) and nothing
 * else — autocannon's per-request bookkeeping (histograms, timers, its request builder) cost
 * ~0.2 ms of CPU per request on the slow machine of 2026-11-26, about an eighth of the whole
 * pipeline's cost per notification.
 */
export async function postAll(options: PostAllOptions): Promise<void> {
  const { hostname, port, pathname } = new URL(options.url);
  const extra = Object.entries(options.headers ?? {})
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const head = `POST ${pathname} HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: application/json\r\n${extra}content-length: `;
  let sent = 0;
  let failure: Error | undefined;

  const run = (socket: Socket) =>
    new Promise<void>((resolve, reject) => {
      let buffer: Buffer = Buffer.alloc(0);
      const next = () => {
        if (failure || sent >= options.amount) {
          socket.end();
          return resolve();
        }
        sent++;
        const body = options.body();
        socket.write(`${head}${Buffer.byteLength(body)}\r\n\r\n${body}`);
      };
      socket.on('data', (chunk: Buffer) => {
        buffer = buffer.length ? Buffer.concat([buffer, chunk]) : chunk;
        while (true) {
          const end = buffer.indexOf('\r\n\r\n');
          if (end < 0) return;
          const headers = buffer.toString('latin1', 0, end);
          const length = /\r\ncontent-length: *(\d+)/i.exec(headers);
          if (!length) return reject(new Error(`an answer without content-length: ${headers}`));
          const total = end + 4 + Number(length[1]);
          if (buffer.length < total) return;
          const status = Number(headers.slice(9, 12));
          const body = buffer.toString('utf8', end + 4, total);
          buffer = buffer.subarray(total);
          options.onAnswer?.();
          if (!options.check(status, body)) {
            failure ??= new Error(`refused answer: ${status} ${body}`);
            socket.destroy();
            return reject(failure);
          }
          next();
        }
      });
      socket.on('error', reject);
      socket.on('close', () =>
        sent >= options.amount || failure ? resolve() : reject(new Error('closed early')),
      );
      next();
    });

  await Promise.all(
    Array.from({ length: Math.min(options.connections, options.amount) }, async () => {
      const socket = connect(Number(port), hostname);
      socket.setNoDelay(true);
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
      });
      await run(socket);
    }),
  );
  if (failure) throw failure;
}
