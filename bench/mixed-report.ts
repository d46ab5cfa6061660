import type { Recorder } from './mixed-load.ts';

/** Per-operation totals of a mixed run, and an SVG chart of throughput and p99 over time. */
export interface OperationSummary {
  operation: string;
  requests: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  errorRate: number;
  statuses: Record<string, number>;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export function summarise(recorder: Recorder, durationMs: number): OperationSummary[] {
  return [...recorder.operations].map(([operation, { buckets, statuses }]) => {
    const filled = buckets.filter(Boolean);
    const latencies = filled.flatMap((bucket) => bucket.latencies).sort((a, b) => a - b);
    const errors = filled.reduce((sum, bucket) => sum + bucket.errors, 0);
    return {
      operation,
      requests: latencies.length,
      perSecond: latencies.length / (durationMs / 1000),
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      errors,
      errorRate: latencies.length ? errors / latencies.length : 0,
      statuses: Object.fromEntries(statuses),
    };
  });
}

export function table(rows: OperationSummary[], baselinePerSecond: number): string {
  const header = [
    'operation',
    'requests',
    'req/s',
    'p50 ms',
    'p99 ms',
    'errors',
    'error %',
    'of baseline',
    'answers',
  ];
  const lines = rows.map((row) => [
    row.operation,
    String(row.requests),
    row.perSecond.toFixed(0),
    row.p50Ms.toFixed(1),
    row.p99Ms.toFixed(1),
    String(row.errors),
    (row.errorRate * 100).toFixed(3),
    (row.perSecond / baselinePerSecond).toFixed(3),
    Object.entries(row.statuses)
      .map(([status, count]) => `${status}×${count}`)
      .join(' '),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((line) => line[i].length)));
  const format = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i])).join('  ');
  return [format(header), ...lines.map(format)].join('\n');
}

export const COLOURS = [
  '#1f77b4',
  '#d62728',
  '#2ca02c',
  '#9467bd',
  '#ff7f0e',
  '#8c564b',
  '#e377c2',
  '#17becf',
  '#7f7f7f',
];

/** Two stacked panels: requests per second and p99 latency per second, one line per operation. */
export function chart(recorder: Recorder, title: string): string {
  // The last second is cut short by the end of the run: leave it out.
  const p99Of = (latencies: number[]) =>
    percentile(
      [...latencies].sort((a, b) => a - b),
      99,
    );
  const series = [...recorder.operations].map(([operation, { buckets }]) => ({
    operation,
    rate: Array.from(buckets, (bucket) => bucket?.count ?? 0).slice(0, -1),
    p99: Array.from(buckets, (bucket) => (bucket ? p99Of(bucket.latencies) : 0)).slice(0, -1),
  }));
  const seconds = Math.max(1, ...series.map((s) => s.rate.length));
  const width = 900;
  const panel = 220;
  const left = 60;
  const top = 40;
  const plotWidth = width - left - 200;
  const panels = [
    // Paste reads outnumber everything else 100:1, so throughput is drawn on a log scale.
    { label: 'requests / s (log scale)', values: series.map((s) => s.rate), y: top, log: true },
    { label: 'p99 latency (ms)', values: series.map((s) => s.p99), y: top + panel + 50, log: false },
  ];
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${top + 2 * panel + 90}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${left}" y="22" font-size="15">${escapeXml(title)}</text>`,
  ];
  for (const { label, values, y, log } of panels) {
    const max = Math.max(1, ...values.flat());
    const scale = (v: number) => (log ? Math.log10(1 + v) / Math.log10(1 + max) : v / max);
    const sx = (i: number) => left + (i / Math.max(1, seconds - 1)) * plotWidth;
    const sy = (v: number) => y + panel - scale(v) * panel;
    parts.push(
      `<rect x="${left}" y="${y}" width="${plotWidth}" height="${panel}" fill="none" stroke="#ccc"/>`,
      `<text x="${left}" y="${y - 6}">${label} (max ${max.toFixed(0)})</text>`,
      `<text x="${left}" y="${y + panel + 15}">0 s</text>`,
      `<text x="${left + plotWidth - 30}" y="${y + panel + 15}">${seconds} s</text>`,
    );
    values.forEach((line, index) => {
      const points = line.map((v, i) => `${sx(i).toFixed(1)},${sy(v).toFixed(1)}`).join(' ');
      parts.push(
        `<polyline fill="none" stroke-width="1.5" stroke="${COLOURS[index % COLOURS.length]}" points="${points}"/>`,
      );
    });
  }
  series.forEach((s, index) => {
    const y = top + 14 + index * 18;
    parts.push(
      `<rect x="${left + plotWidth + 16}" y="${y - 9}" width="12" height="12" fill="${COLOURS[index % COLOURS.length]}"/>`,
      `<text x="${left + plotWidth + 34}" y="${y + 1}">${escapeXml(s.operation)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
