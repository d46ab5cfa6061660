import { AsyncLocalStorage, executionAsyncResource } from 'node:async_hooks';

/**
 * Keeps `process.nextTick` fast for the life of the process. Imported first (main.ts, app.ts).
 *
 * Node builds each queued tick as `{[asyncId]: …, [triggerId]: …, [contextFrame]: …, callback,
 * args}`; the three computed keys are stored by V8 "define in literal" inline caches, which go
 * straight from monomorphic to megamorphic (a runtime call each, for ever) the first time they
 * meet a map other than the one they cached. Start-up (PGlite) runs several full GCs while no
 * tick is queued, V8 frees those maps as unused, the next tick builds new ones, and every
 * nextTick after that cost ~5x (in the app ~340 ns vs ~60 ns in a bare Fastify process; Fastify,
 * pino and streams call it several times per request). Holding one tick object keeps its
 * maps alive, so every later tick reuses them.
 *
 * Reading AsyncLocalStorage makes Node switch to its active AsyncContextFrame class now, before
 * nextTick's `AsyncContextFrame.current()` call site sees both classes (a generic call).
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
