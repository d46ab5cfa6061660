import type { Server, ServerResponse } from 'node:http';

export interface Connections {
  /** Requests received and not yet answered or aborted (open SSE streams included). */
  inFlight(): number;
  /** Stops the sweep (the server's close ends the connections themselves). */
  stop(): void;
}

/** A response in progress, and what a sweep last saw of its connection. */
interface Watched {
  response: ServerResponse;
  /** Bytes read and flushed when a sweep last saw them move; -1 until a sweep has seen them. */
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
 * What the watch keeps must let a finished response die young, since most requests end between
 * two young-generation collections and everything a survivor points to is copied with it:
 * - Responses are tracked, not connections, so that no listener is added to a connection: Node
 *   keeps two listeners of one event in an array, and arrays made per connection live as long as
 *   it does. V8 counts which of the arrays made at one place in the code survive a collection;
 *   seeing those survive, it allocates all of that place's arrays in the old generation from then
 *   on, the per-request ones included, and each dead one there keeps its request's objects alive
 *   until the next full collection (bench/README.md, "pretenured listener arrays").
 * - They sit in slots of an array reused as requests end, not in a Map: with a Map, responses
 *   outlived their requests the same way (measured; as we read V8, a Map whose entries come and go
 *   is rebuilt into new tables, and each table left behind in the old generation still names the
 *   responses it held; bench/README.md, "a Map of responses").
 */
export function watchConnections(server: Server, silentMs: number, now = Date.now): Connections {
  // Responses not yet closed, in slots freed (set undefined) when they close and handed out again;
  // as long as the most requests ever in flight at once, which a sweep reads through. Every slot
  // is either taken or free, so the requests in flight are the slots less the free ones.
  const slots: (Watched | undefined)[] = [];
  const free: number[] = [];
  server.on('request', (_request, response: ServerResponse) => {
    const slot = free.pop() ?? slots.length;
    const watched: Watched = { response, read: -1, flushed: -1, since: 0 };
    slots[slot] = watched;
    // 'close' comes once, however the request ends (checked all the same: a slot freed twice would
    // be handed to two responses); `on`, as `once` would build a wrapper too.
    response.on('close', () => {
      if (slots[slot] !== watched) return;
      slots[slot] = undefined;
      free.push(slot);
    });
  });
  const every = Math.max(50, Math.min(5000, Math.floor(silentMs / 4)));
  let lastSweep = now();
  const sweep = setInterval(() => {
    const at = now();
    // A sweep that comes late means this process was stalled (a long GC, a starved CPU): the
    // silence was ours, not the clients', so this round only takes note of the counts.
    const stalled = at - lastSweep > 2 * every;
    lastSweep = at;
    for (const seen of slots) {
      if (seen === undefined) continue;
      // Null while a pipelined response waits for the one before it on its connection.
      const socket = seen.response.socket;
      if (socket === null) continue;
      const read = socket.bytesRead;
      // Bytes handed to the kernel: what is still queued in the socket has not left.
      const flushed = socket.bytesWritten - socket.writableLength;
      if (stalled || read !== seen.read || flushed !== seen.flushed) {
        seen.read = read;
        seen.flushed = flushed;
        seen.since = at;
      } else if (at - seen.since >= silentMs) socket.destroy();
    }
  }, every);
  sweep.unref();
  return { inFlight: () => slots.length - free.length, stop: () => clearInterval(sweep) };
}
