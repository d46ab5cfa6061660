import { EventEmitter } from 'node:events';
import { sql } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/index.ts';
import {
  type ConsumeOptions,
  type Consumer,
  type DeadLetter,
  describeError,
  type Handler,
  nextStep,
  type Queue,
  type QueueMessage,
} from './index.ts';

export interface PostgresQueueOptions {
  dedupWindowMs?: number;
  /** How long a claimed message stays invisible to others before it counts as abandoned. */
  leaseMs?: number;
  /** Idle polling interval; a publish in this process wakes its consumers at once. */
  pollMs?: number;
}

interface Row {
  id: bigint;
  topic: string;
  key: string;
  dedup_id: string;
  payload: unknown;
  attempt: number;
}

/**
 * The embedded queue: one Postgres table claimed with `FOR UPDATE SKIP LOCKED`. Only the
 * oldest ready message of each key can be claimed, so a key's messages run one at a time and
 * in order (a message waiting for its retry holds its key back, and only its key).
 */
export function createPostgresQueue(db: Db, clock: Clock, options: PostgresQueueOptions = {}): Queue {
  const dedupWindowMs = options.dedupWindowMs ?? 24 * 3600_000;
  const leaseMs = options.leaseMs ?? 30_000;
  const pollMs = options.pollMs ?? 100;
  const events = new EventEmitter();
  const wake = new EventEmitter();
  wake.setMaxListeners(0);
  const consumers = new Set<Consumer>();
  let lastDedupPurge = 0;

  const at = (offsetMs = 0) => new Date(clock.now().getTime() + offsetMs);

  async function purgeDedup() {
    const now = clock.now().getTime();
    if (now - lastDedupPurge < 60_000) return;
    lastDedupPurge = now;
    await sql`delete from queue_dedup where (topic, dedup_id) in (
      select topic, dedup_id from queue_dedup where expires_at <= ${at()} limit 5000)`.execute(db);
  }

  async function claim(topic: string, limit: number): Promise<Row[]> {
    const now = at();
    const { rows } = await sql<Row>`
      with candidates as (
        select m.id from queue_messages m
        where m.topic = ${topic} and m.status = 'ready' and m.visible_at <= ${now}
          and (m.lease_until is null or m.lease_until <= ${now})
          and not exists (
            select 1 from queue_messages p
            where p.topic = m.topic and p.key = m.key and p.status = 'ready' and p.id < m.id)
        order by m.id
        limit ${limit}
        for update skip locked
      )
      update queue_messages q set lease_until = ${at(leaseMs)}, attempt = q.attempt + 1
      from candidates c where q.id = c.id
      returning q.id, q.topic, q.key, q.dedup_id, q.payload, q.attempt`.execute(db);
    return rows;
  }

  function consume<T>(topic: string, opts: ConsumeOptions, handler: Handler<T>): Consumer {
    const concurrency = opts.concurrency ?? 10;
    const abort = new AbortController();
    const inFlight = new Set<Promise<void>>();
    let nudged = false;
    const onWake = () => {
      nudged = true;
    };
    wake.on(topic, onWake);

    async function handle(row: Row) {
      // Keep the lease while the handler runs, so a slow send is not taken over by another worker.
      const renew = setInterval(() => {
        sql`update queue_messages set lease_until = ${at(leaseMs)} where id = ${row.id} and attempt = ${row.attempt}`
          .execute(db)
          .catch(() => {});
      }, leaseMs / 3);
      try {
        await handler({
          id: row.dedup_id,
          key: row.key,
          topic,
          payload: row.payload as T,
          attempt: row.attempt,
          signal: abort.signal,
        });
        await sql`delete from queue_messages where id = ${row.id} and attempt = ${row.attempt}`.execute(db);
        events.emit('outcome', topic, 'acked');
      } catch (error) {
        const step = nextStep(error, row.attempt, opts.retryDelaysMs);
        const message = describeError(error);
        if (step.kind === 'dead') {
          await sql`update queue_messages set status = 'dead', dead_at = ${at()}, lease_until = null, last_error = ${message}
            where id = ${row.id} and attempt = ${row.attempt}`.execute(db);
          events.emit('outcome', topic, 'dead_lettered');
        } else {
          const spent = step.kind === 'defer' ? 1 : 0;
          await sql`update queue_messages set visible_at = ${at(step.delayMs)}, lease_until = null,
              last_error = ${message}, attempt = attempt - ${spent}
            where id = ${row.id} and attempt = ${row.attempt}`.execute(db);
          events.emit('outcome', topic, step.kind === 'defer' ? 'deferred' : 'retried');
        }
      } finally {
        clearInterval(renew);
      }
    }

    const loop = (async () => {
      while (!abort.signal.aborted) {
        let claimed: Row[] = [];
        const free = concurrency - inFlight.size;
        if (free > 0) {
          try {
            nudged = false;
            claimed = await claim(topic, free);
            await purgeDedup();
          } catch (error) {
            events.emit('error', error);
          }
        }
        for (const row of claimed) {
          const task: Promise<void> = handle(row)
            .catch((error) => {
              events.emit('error', error);
            })
            .finally(() => inFlight.delete(task));
          inFlight.add(task);
        }
        if (claimed.length === 0 || inFlight.size >= concurrency) {
          // Sleep until the poll interval passes, a local publish arrives or a task finishes.
          await new Promise<void>((resolve) => {
            const timer = setTimeout(done, pollMs);
            const tasks = [...inFlight];
            function done() {
              clearTimeout(timer);
              wake.off(topic, done);
              abort.signal.removeEventListener('abort', done);
              resolve();
            }
            if (nudged && inFlight.size < concurrency) return done();
            wake.once(topic, done);
            abort.signal.addEventListener('abort', done, { once: true });
            if (tasks.length > 0) Promise.race(tasks).then(done, done);
          });
        }
      }
    })();

    const consumer: Consumer = {
      async stop() {
        abort.abort(new Error('consumer stopping'));
        wake.off(topic, onWake);
        await loop;
        await Promise.allSettled([...inFlight]);
        consumers.delete(consumer);
      },
    };
    consumers.add(consumer);
    return consumer;
  }

  async function publish<T>(topic: string, message: QueueMessage<T>) {
    const now = at();
    const { rows } = await sql<{ id: bigint }>`
      with fresh as (
        insert into queue_dedup (topic, dedup_id, expires_at)
        values (${topic}, ${message.id}, ${at(dedupWindowMs)})
        on conflict (topic, dedup_id) do update set expires_at = excluded.expires_at
          where queue_dedup.expires_at <= ${now}
        returning 1
      )
      insert into queue_messages (topic, key, dedup_id, payload, visible_at, created_at)
      select ${topic}, ${message.key}, ${message.id}, ${JSON.stringify(message.payload)}::jsonb, ${now}, ${now}
      from fresh
      returning id`.execute(db);
    if (rows.length > 0) wake.emit(topic);
    return { duplicate: rows.length === 0 };
  }

  return {
    kind: 'postgres',
    events,
    publish,
    // Stored before it resolves, like `publish`: this queue has no cheaper way to hand a message over.
    publishUnconfirmed: async <T>(topic: string, message: QueueMessage<T>) => {
      await publish(topic, message);
    },
    consume,
    async deadLetters<T>(topic: string, limit = 100) {
      const { rows } = await sql<Row & { last_error: string; dead_at: Date }>`
        select id, topic, key, dedup_id, payload, attempt, last_error, dead_at from queue_messages
        where topic = ${topic} and status = 'dead' order by dead_at desc, id desc limit ${limit}`.execute(db);
      return rows.map(
        (row): DeadLetter<T> => ({
          deadLetterId: String(row.id),
          topic: row.topic,
          messageId: row.dedup_id,
          key: row.key,
          payload: row.payload as T,
          attempts: row.attempt,
          error: row.last_error ?? '',
          deadAt: row.dead_at,
        }),
      );
    },
    async redrive(topic, deadLetterId) {
      if (!/^\d+$/.test(deadLetterId)) return false;
      const result = await sql`update queue_messages
        set status = 'ready', attempt = 0, visible_at = ${at()}, dead_at = null, lease_until = null
        where id = ${BigInt(deadLetterId)} and topic = ${topic} and status = 'dead'`.execute(db);
      const changed = Number(result.numAffectedRows ?? 0n) > 0;
      if (changed) wake.emit(topic);
      return changed;
    },
    async depth(topic) {
      const { rows } = await sql<{ n: bigint }>`
        select count(*) as n from queue_messages where topic = ${topic} and status = 'ready'`.execute(db);
      return Number(rows[0].n);
    },
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await Promise.all([...consumers].map((consumer) => consumer.stop()));
    },
  };
}
