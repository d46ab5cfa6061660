import type { Server, ServerResponse } from 'node:http';

export interface Connections {
  /** Requests received and not yet answered or aborted (open SSE streams included). */
  inFlight(): number;
  /** Stops the sweep (the server's close ends the connections themselves). */
  stop(): void;
}

/** What a sweep last saw of a response's connection, and since when nothing has moved on it. */
interface Progress {
  read: number;
  flushed: number;
  since: number;
}

/**
 * The requests in flight, and the connection timeout (CONNECTION_TIMEOUT_MS): a connection with
 * a request in progress and no traffic either way for `silentMs` (to `silentMs` and a quarter) — a
 * handler that never answers, a client that stopped reading its answer or its stream — is closed.
 *
 * Why not Node's `server.timeout`: it re-arms a timer on every read and write of every socket,
 * work each small request pays for; a sweep every quarter of the timeout compares two byte counts
 * per response in progress instead. Idle keep-alive connections are left to
 * KEEP_ALIVE_TIMEOUT_MS, and a request still arriving to the request and headers timeouts.
 *
 * In flight is counted on the server rather than in Fastify's hooks: a response's 'close' comes
 * however the request ends (answered, aborted, timed out), where onResponse misses the aborted ones.
 *
 * Responses are tracked, not connections, so that no listener is added to a connection: Node
 * keeps two listeners of one event in an array, and arrays made per connection live as long as
 * it does. V8 counts which of the arrays made at one place in the code survive a young-generation
 * collection; seeing those survive, it allocates all of that place's arrays in the old generation
 * from then on, the per-request ones included, and each dead one there keeps its request's
 * objects alive until the next full collection (bench/README.md, "pretenured listener arrays").
 */
export function watchConnections(server: Server, silentMs: number, now = Date.now): Connections {
  // Responses not yet closed; the progress is undefined until a sweep has seen the response.
  const open = new Map<ServerResponse, Progress | undefined>();
  // One function for every response; 'close' comes once, so a plain listener (`once` would build
  // a wrapper per request).
  function closed(this: ServerResponse) {
    open.delete(this);
  }
  server.on('request', (_request, response: ServerResponse) => {
    open.set(response, undefined);
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
    for (const [response, seen] of open) {
      // Null while a pipelined response waits for the one before it on its connection.
      const socket = response.socket;
      if (socket === null) continue;
      const read = socket.bytesRead;
      // Bytes handed to the kernel: what is still queued in the socket has not left.
      const flushed = socket.bytesWritten - socket.writableLength;
      if (seen === undefined) open.set(response, { read, flushed, since: at });
      else if (stalled || read !== seen.read || flushed !== seen.flushed) {
        seen.read = read;
        seen.flushed = flushed;
        seen.since = at;
      } else if (at - seen.since >= silentMs) socket.destroy();
    }
  }, every);
  sweep.unref();
  return { inFlight: () => open.size, stop: () => clearInterval(sweep) };
}
