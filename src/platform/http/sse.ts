import type { FastifyReply, FastifyRequest } from 'fastify';

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
  _request: FastifyRequest,
  reply: FastifyReply,
  heartbeatMs: number,
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
    open.delete(stream);
    finish();
  }
  // The response, not the request: a body-less request is an already-ended stream whose 'close'
  // never fires (`optimizeEmptyRequests`, app.ts); the response closes when the client goes away.
  raw.on('close', cleanup);
  open.add(stream);
  return stream;
}

export interface SseHub {
  open(request: FastifyRequest, reply: FastifyReply, heartbeatMs?: number): SseStream;
  /** Ends every open stream; called at shutdown so the server is not held open by them. */
  closeAll(): void;
  count(): number;
}

export function createSseHub(): SseHub {
  const streams = new Set<SseStream>();
  return {
    open: (request, reply, heartbeatMs = 15_000) => openSse(streams, request, reply, heartbeatMs),
    closeAll() {
      for (const stream of [...streams]) stream.close();
    },
    count: () => streams.size,
  };
}
