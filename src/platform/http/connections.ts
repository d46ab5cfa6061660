import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface Connections {
  /** Requests received and not yet answered or aborted (open SSE streams included). */
  inFlight(): number;
  /** Stops the sweep (the server's close ends the connections themselves). */
  stop(): void;
}

interface Seen {
  /** Requests on this connection not yet closed. */
  busy: number;
  read: number;
  flushed: number;
  since: number;
}

/**
 * The requests in flight, and the connection timeout (CONNECTION_TIMEOUT_MS): a connection with
 * a request in progress and no traffic either way for `silentMs` — a handler that never answers,
 * a client that stopped reading its answer or its stream — is closed.
 *
 * Why not Node's `server.timeout`: it re-arms a timer on every read and write of every socket,
 * work each small request pays for; a sweep every quarter of the timeout compares two byte counts
 * per connection instead. Idle keep-alive connections are left to KEEP_ALIVE_TIMEOUT_MS, and a
 * request still arriving to the request and headers timeouts, as before.
 *
 * In flight is counted on the server rather than in Fastify's hooks: a response's 'close' comes
 * however the request ends (answered, aborted, timed out), where onResponse misses the aborted ones.
 */
export function watchConnections(server: Server, silentMs: number, now = Date.now): Connections {
  const seen = new Map<Socket, Seen>();
  let inFlight = 0;
  server.on('connection', (socket: Socket) => {
    seen.set(socket, { busy: 0, read: 0, flushed: 0, since: now() });
    socket.on('close', () => seen.delete(socket));
  });
  // One function for every response; 'close' comes once, so a plain listener (`once` would build
  // a wrapper per request).
  function closed(this: ServerResponse) {
    inFlight--;
    const state = seen.get(this.req.socket);
    if (state !== undefined) state.busy--;
  }
  server.on('request', (request, response) => {
    inFlight++;
    const state = seen.get(request.socket);
    if (state !== undefined) state.busy++;
    response.on('close', closed);
  });
  const every = Math.max(50, Math.min(5000, Math.floor(silentMs / 4)));
  let lastSweep = now();
  const sweep = setInterval(() => {
    const at = now();
    // A sweep that comes late means this process was stalled (a long GC, a starved CPU): the
    // silence was ours, not the clients', so this round only takes note of the counts.
    const stalled = at - lastSweep > 2 * every;
    lastSweep = at;
    for (const [socket, state] of seen) {
      // Bytes handed to the kernel: what is still queued in the socket has not left.
      const flushed = socket.bytesWritten - socket.writableLength;
      if (stalled || state.busy === 0 || socket.bytesRead !== state.read || flushed !== state.flushed) {
        state.read = socket.bytesRead;
        state.flushed = flushed;
        state.since = at;
      } else if (at - state.since >= silentMs) socket.destroy();
    }
  }, every);
  sweep.unref();
  return { inFlight: () => inFlight, stop: () => clearInterval(sweep) };
}
