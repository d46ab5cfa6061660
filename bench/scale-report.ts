import { COLOURS, escapeXml } from './mixed-report.ts';
import type { SizeResult } from './scale.ts';

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

/** One line per operation: p50/p99/req/s at each size, and the largest size's p99 over the empty one's. */
export function scaleTable(results: SizeResult[]): string {
  const [empty] = results;
  const largest = results.at(-1)!;
  const header = ['operation', ...results.map((r) => `${r.label} p50/p99 ms, req/s`), 'p99 largest/empty'];
  const lines = empty.operations.map((base) => {
    const cells = results.map((size) => {
      const op = size.operations.find((o) => o.operation === base.operation);
      return op ? `${op.p50Ms.toFixed(1)}/${op.p99Ms.toFixed(1)}, ${op.perSecond.toFixed(0)}` : '-';
    });
    const last = largest.operations.find((o) => o.operation === base.operation);
    const ratio = last && base.p99Ms > 0 ? (last.p99Ms / base.p99Ms).toFixed(2) : '-';
    return [base.operation, ...cells, ratio];
  });
  const jobs = [...new Set(results.flatMap((r) => r.jobs.map((j) => j.job)))].map((job) => [
    `job ${job} (one tick, s)`,
    ...results.map((r) => r.jobs.find((j) => j.job === job)?.seconds.toFixed(2) ?? '-'),
    '',
  ]);
  const sizes = [
    'database rows, bytes',
    ...results.map((r) => `${r.rows.toLocaleString('en')}, ${mib(r.bytes)}`),
    '',
  ];
  const rows = [header, sizes, ...lines, ...jobs];
  const widths = header.map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  return rows.map((row) => row.map((cell, i) => cell.padEnd(widths[i])).join(' | ')).join('\n');
}

/** p99 (ms, linear) against the database's rows (log scale), one line per operation. */
export function scaleChart(results: SizeResult[], title: string): string {
  const width = 960;
  const height = 480;
  const left = 60;
  const top = 40;
  const plotWidth = 620;
  const plotHeight = height - top - 60;
  const operations = results[0].operations.map((o) => o.operation);
  const xs = results.map((r) => Math.log10(Math.max(10, r.rows)));
  const [minX, maxX] = [Math.min(...xs), Math.max(...xs, Math.min(...xs) + 1)];
  const maxY = Math.max(1, ...results.flatMap((r) => r.operations.map((o) => o.p99Ms)));
  const sx = (x: number) => left + ((x - minX) / (maxX - minX)) * plotWidth;
  const sy = (y: number) => top + plotHeight - (y / maxY) * plotHeight;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${left}" y="22" font-size="15">${escapeXml(title)}</text>`,
    `<rect x="${left}" y="${top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#ccc"/>`,
    `<text x="${left - 50}" y="${top + 4}">${maxY.toFixed(0)} ms</text>`,
    `<text x="${left - 20}" y="${top + plotHeight}">0</text>`,
    ...results.map(
      (r, i) =>
        `<text x="${sx(xs[i]) - 20}" y="${top + plotHeight + 16}">${escapeXml(r.label)}</text><text x="${sx(xs[i]) - 20}" y="${top + plotHeight + 30}">${r.rows.toExponential(1)} rows</text>`,
    ),
  ];
  operations.forEach((operation, index) => {
    const colour = COLOURS[index % COLOURS.length];
    const points = results
      .map((r, i) => [xs[i], r.operations.find((o) => o.operation === operation)?.p99Ms] as const)
      .filter((point): point is readonly [number, number] => point[1] !== undefined)
      .map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`)
      .join(' ');
    const y = top + 8 + index * 17;
    parts.push(
      `<polyline fill="none" stroke-width="1.5" stroke="${colour}" points="${points}"/>`,
      `<rect x="${left + plotWidth + 16}" y="${y - 9}" width="12" height="12" fill="${colour}"/>`,
      `<text x="${left + plotWidth + 34}" y="${y + 1}">${escapeXml(operation)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
