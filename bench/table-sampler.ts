import pg from 'pg';

/**
 * The steady-state check of a mixed run with short retention windows (`--retention=2m`): rows of
 * every table that grows with traffic, counted every `everyMs`, and the rows the retention jobs
 * removed so far (the scheduler's `retention_rows_removed_total`). Bounded means the kept rows
 * stop growing once the first windows have passed while the removed ones keep climbing. The
 * notifications' count covers their deliveries and attempts too (removed in the same statement).
 */
export const GROWING_TABLES = [
  'notifications',
  'notification_deliveries',
  'notification_attempts',
  'booking_queue_entries',
  'parking_tickets',
  'parking_payments',
];
/**
 * Counted too, but their windows are not shortened: idempotency keys live 24 h (the replay
 * promise), the dev inbox a week (a development provider), payment event ids at least 3 days.
 */
export const FIXED_WINDOW_TABLES = ['idempotency_keys', 'notify_inbox', 'payment_webhook_events'];
/** Kept with the business records they belong to: a booked hold is part of its booking. */
export const KEPT_TABLES = ['booking_bookings', 'booking_holds'];

export interface TableSample {
  second: number;
  rows: Record<string, number>;
  removed: Record<string, number>;
}

export function startTableSampler(databaseUrl: string, schedulerBase: string, everyMs = 30_000) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  const samples: TableSample[] = [];
  const started = performance.now();
  const take = async () => {
    const second = Math.round((performance.now() - started) / 1000);
    const rows: Record<string, number> = {};
    for (const table of [...GROWING_TABLES, ...FIXED_WINDOW_TABLES, ...KEPT_TABLES]) {
      rows[table] = Number((await pool.query(`select count(*) as n from ${table}`)).rows[0].n);
    }
    const text = await fetch(`${schedulerBase}/metrics`).then(
      (response) => response.text(),
      () => '',
    );
    const removed: Record<string, number> = {};
    for (const match of text.matchAll(/^retention_rows_removed_total\{table="([^"]+)"\} (\S+)$/gm)) {
      removed[match[1]] = Number(match[2]);
    }
    samples.push({ second, rows, removed });
  };
  let pending = take();
  const timer = setInterval(() => {
    pending = pending.then(take, take);
  }, everyMs);
  return {
    async stop(): Promise<TableSample[]> {
      clearInterval(timer);
      await pending.catch(() => {});
      await take();
      await pool.end();
      return samples;
    },
  };
}

/** Per table: rows at each sample, and whether the last third stayed within the middle third's peak (+20 %). */
export function boundedReport(samples: TableSample[]): string[] {
  const third = Math.max(1, Math.floor(samples.length / 3));
  const listed = (tables: string[], note: string) =>
    tables.map(
      (table) => `${table}: rows ${samples.map((sample) => sample.rows[table]).join(' → ')} (${note})`,
    );
  const growing = GROWING_TABLES.map((table) => {
    const series = samples.map((sample) => sample.rows[table]);
    const middlePeak = Math.max(...series.slice(third, 2 * third));
    const lastPeak = Math.max(...series.slice(2 * third));
    const removed = samples.at(-1)?.removed[table] ?? 0;
    const bounded = lastPeak <= middlePeak * 1.2 + 10;
    return `${table}: rows ${series.join(' → ')}; removed by retention ${removed}; ${bounded ? 'bounded' : 'STILL GROWING'}`;
  });
  return [
    ...growing,
    ...listed(FIXED_WINDOW_TABLES, 'window not shortened'),
    ...listed(KEPT_TABLES, 'records, kept'),
  ];
}
