import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Cron } from 'croner';
import { sql } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/index.ts';

export interface JobDefinition {
  name: string;
  /** Cron pattern (croner syntax, seconds optional), evaluated in UTC. */
  schedule: string;
  run(context: { tickAt: Date; signal: AbortSignal }): Promise<void>;
}

export interface Scheduler {
  add(job: JobDefinition): void;
  /** The jobs added, by name. */
  names(): string[];
  start(): void;
  /**
   * Runs `job` for the tick at `tickAt` unless some instance already claimed that tick.
   * Returns whether this instance ran it. Tests call it directly with a moved clock.
   */
  runTick(name: string, tickAt: Date): Promise<boolean>;
  /** Stops scheduling and waits for running jobs. */
  stop(): Promise<void>;
  readonly events: EventEmitter;
}

/**
 * Periodic jobs that run once per tick across all instances. Every instance wakes on the same
 * cron tick; the first to insert (job, tick) into `job_ticks` runs it and the others skip.
 * A plain advisory lock would only stop *overlapping* runs: an instance waking a few
 * milliseconds after another finished would run the same tick again.
 */
export function createScheduler(db: Db, clock: Clock, instance: string = randomUUID()): Scheduler {
  const jobs = new Map<string, JobDefinition>();
  const crons: Cron[] = [];
  const running = new Set<Promise<unknown>>();
  const abort = new AbortController();
  const events = new EventEmitter();

  async function runTick(name: string, tickAt: Date): Promise<boolean> {
    const job = jobs.get(name);
    if (!job) throw new Error(`unknown job ${name}`);
    const claimed = await sql`
      insert into job_ticks (job, tick_at, instance, started_at) values (${name}, ${tickAt}, ${instance}, ${clock.now()})
      on conflict do nothing`.execute(db);
    if (Number(claimed.numAffectedRows ?? 0n) === 0) return false;
    const started = performance.now();
    let outcome = 'ok';
    try {
      await job.run({ tickAt, signal: abort.signal });
    } catch (error) {
      outcome = 'error';
      events.emit('error', name, error);
    }
    await sql`update job_ticks set finished_at = ${clock.now()}, outcome = ${outcome}
      where job = ${name} and tick_at = ${tickAt}`.execute(db);
    // Keep a week of history: enough to see what ran, small enough to never matter.
    await sql`delete from job_ticks where job = ${name} and tick_at < ${new Date(tickAt.getTime() - 7 * 86_400_000)}`.execute(
      db,
    );
    events.emit('ran', name, outcome, (performance.now() - started) / 1000);
    return true;
  }

  return {
    events,
    add(job) {
      if (jobs.has(job.name)) throw new Error(`job ${job.name} added twice`);
      jobs.set(job.name, job);
    },
    names: () => [...jobs.keys()],
    start() {
      for (const job of jobs.values()) {
        const cron = new Cron(job.schedule, { timezone: 'UTC', protect: true }, () => {
          // The tick is the scheduled time truncated to the second, identical on every instance.
          const scheduled = cron.currentRun() ?? new Date();
          const tickAt = new Date(Math.floor(scheduled.getTime() / 1000) * 1000);
          const task = runTick(job.name, tickAt)
            .catch((error) => events.emit('error', job.name, error))
            .finally(() => running.delete(task));
          running.add(task);
        });
        crons.push(cron);
      }
    },
    runTick,
    async stop() {
      for (const cron of crons) cron.stop();
      abort.abort(new Error('scheduler stopping'));
      await Promise.allSettled([...running]);
    },
  };
}
