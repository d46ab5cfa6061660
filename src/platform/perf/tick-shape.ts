import { AsyncLocalStorage, executionAsyncResource } from 'node:async_hooks';

/**
 * Keeps `process.nextTick` on V8's fast path for the life of the process. Imported first
 * (main.ts, app.ts).
 *
 * Why: Node builds each queued tick as an object literal with three computed keys; V8 stores them
 * through "define in literal" inline caches, which go from monomorphic straight to megamorphic
 * (a runtime call each, for ever) the first time they meet a map other than the one they cached.
 * Start-up (PGlite) runs full GCs while no tick is queued, V8 frees the tick object's maps as
 * unused, the next tick builds new ones, and every nextTick after that takes the slow path.
 * Fastify, pino and streams queue several ticks per request. An A/B run of the hello scenario
 * without this module showed it worth more than a hack must earn (bench/README.md).
 *
 * What it assumes (Node's tick object and V8's map collection, checked by tick-shape.test.ts
 * through %DebugPrint): holding one tick object (the async resource of a tick callback) keeps
 * its maps alive, so every later tick reuses them; and reading AsyncLocalStorage makes Node pick
 * its AsyncContextFrame class now, before nextTick's `AsyncContextFrame.current()` call site sees
 * two classes. If an upgrade changes either, holding the object stays harmless and the canary
 * test fails.
 */
void AsyncLocalStorage;

const pinned: object[] = [];

process.nextTick(() => {
  pinned.push(executionAsyncResource());
});

/** The tick object held (for the test). */
export function pinnedTick(): object | undefined {
  return pinned[0];
}
