import type pg from 'pg';
import type { ServiceSeed } from './common.ts';

export interface TableSize {
  table: string;
  rows: number;
  tableBytes: number;
  indexBytes: number;
  totalBytes: number;
}

export interface RecordSize {
  service: string;
  record: string;
  count: number;
  bytesPerRecord: number;
}

/** Every table of the schema, with exact row counts (the loader's scales are small enough to count). */
export async function tableSizes(client: pg.Client, schema: string): Promise<TableSize[]> {
  const { rows } = await client.query<{
    table: string;
    table_bytes: string;
    index_bytes: string;
    total_bytes: string;
  }>(
    `select tablename as table, pg_table_size(format('%I.%I', schemaname, tablename)) as table_bytes,
       pg_indexes_size(format('%I.%I', schemaname, tablename)) as index_bytes,
       pg_total_relation_size(format('%I.%I', schemaname, tablename)) as total_bytes
     from pg_tables where schemaname = $1 order by tablename`,
    [schema],
  );
  const sizes: TableSize[] = [];
  for (const row of rows) {
    const count = await client.query<{ n: string }>(`select count(*) as n from ${schema}."${row.table}"`);
    sizes.push({
      table: row.table,
      rows: Number(count.rows[0].n),
      tableBytes: Number(row.table_bytes),
      indexBytes: Number(row.index_bytes),
      totalBytes: Number(row.total_bytes),
    });
  }
  return sizes;
}

/**
 * Bytes of one business record: its tables' total bytes, plus the share of the shared tables
 * (payments, sandbox charges) whose rows are this service's, divided by the records.
 */
export async function recordSize(
  client: pg.Client,
  seed: ServiceSeed,
  tables: TableSize[],
): Promise<RecordSize> {
  const byName = new Map(tables.map((table) => [table.table, table]));
  let bytes = seed.recordTables.reduce((sum, name) => sum + (byName.get(name)?.totalBytes ?? 0), 0);
  for (const shared of seed.sharedRows ?? []) {
    const table = byName.get(shared.table);
    if (!table || table.rows === 0) continue;
    const { rows } = await client.query<{ n: string }>(
      `select count(*) as n from ${shared.table} where ${shared.where}`,
    );
    bytes += (table.totalBytes * Number(rows[0].n)) / table.rows;
  }
  const count = byName.get(seed.recordTable)?.rows ?? 0;
  return {
    service: seed.name,
    record: seed.recordName,
    count,
    bytesPerRecord: count ? Math.round(bytes / count) : 0,
  };
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

/** Markdown tables, so a run's output can be pasted into bench/README.md as it is. */
export function formatReport(
  tables: TableSize[],
  records: RecordSize[],
  seconds: Record<string, number>,
): string {
  const lines = ['| table | rows | table MB | index MB | total MB |', '|---|---:|---:|---:|---:|'];
  for (const t of tables) {
    lines.push(
      `| ${t.table} | ${t.rows} | ${mb(t.tableBytes)} | ${mb(t.indexBytes)} | ${mb(t.totalBytes)} |`,
    );
  }
  const total = tables.reduce((sum, t) => sum + t.totalBytes, 0);
  lines.push(`| **all** | ${tables.reduce((sum, t) => sum + t.rows, 0)} | | | ${mb(total)} |`, '');
  lines.push('| service | records | bytes per record | seconds |', '|---|---:|---:|---:|');
  for (const r of records) {
    lines.push(
      `| ${r.service} | ${r.count} ${r.record}s | ${r.bytesPerRecord} | ${seconds[r.service]?.toFixed(1)} |`,
    );
  }
  return lines.join('\n');
}
