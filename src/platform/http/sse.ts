import type { FastifyReply, FastifyRequest } from 'fastify';
import { platformError } from '../errors.ts';

export interface SseStream {
  send(event: string, data: unknown, id?: string): void;
  /** Resolves when the client goes away or the stream is closed. */
  readonly closed: Promise<void>;
  close(): void;
}

/**
 * Server-Sent Events on a hijacked reply: headers that defeat proxy buffering, a comment
 * heartbeat so idle connections survive proxies, and cleanup when the client leaves.
 * Security headers set by onRequest hooks are carried over.
 */
function openSse(
  open: Set<SseStream>,
  reply: FastifyReply,
  heartbeatMs: number,
  onClose: () => void,
): SseStream {
  reply.hijack();
  const raw = reply.raw;
  const inherited = reply.getHeaders();
  raw.writeHead(200, {
    ...Object.fromEntries(Object.entries(inherited).map(([k, v]) => [k, String(v)])),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  raw.write(': connected\n\n');
  let finish!: () => void;
  const closed = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const heartbeat = setInterval(() => raw.write(': ping\n\n'), heartbeatMs);
  heartbeat.unref();
  const stream: SseStream = {
    send(event, data, id) {
      if (raw.writableEnded) return;
      const lines = JSON.stringify(data);
      raw.write(`${id ? `id: ${id}\n` : ''}event: ${event}\ndata: ${lines}\n\n`);
    },
    closed,
    close() {
      if (!raw.writableEnded) raw.end();
      cleanup();
    },
  };
  function cleanup() {
    clearInterval(heartbeat);
    if (open.delete(stream)) onClose();
    finish();
  }
  // The response, not the request: a body-less request is an already-ended stream whose 'close'
  // never fires (`optimizeEmptyRequests`, app.ts); the response closes when the client goes away.
  raw.on('close', cleanup);
  open.add(stream);
  return stream;
}

export interface SseHub {
  /** Opens a stream; 429 when the client's address already holds as many as it may. */
  open(request: FastifyRequest, reply: FastifyReply, heartbeatMs?: number): SseStream;
  /** Ends every open stream; called at shutdown so the server is not held open by them. */
  closeAll(): void;
  count(): number;
}

/**
 * `maxPerAddress`: open streams one client address may hold in this process. A stream costs a
 * socket and memory for as long as the client likes, so one address must not hold them all.
 */
export function createSseHub(options: { maxPerAddress: number }): SseHub {
  const streams = new Set<SseStream>();
  const perAddress = new Map<string, number>();
  return {
    open(request, reply, heartbeatMs = 15_000) {
      const address = request.ip;
      const held = perAddress.get(address) ?? 0;
      if (held >= options.maxPerAddress) {
        throw platformError('rate_limited', {
          detail: `This address already holds ${held} live streams; close one first`,
          headers: { 'Retry-After': '30' },
        });
      }
      perAddress.set(address, held + 1);
      return openSse(streams, reply, heartbeatMs, () => {
        const left = (perAddress.get(address) ?? 1) - 1;
        if (left > 0) perAddress.set(address, left);
        else perAddress.delete(address);
      });
    },
    closeAll() {
      for (const stream of [...streams]) stream.close();
    },
    count: () => streams.size,
  };
}
