import { Agent, request } from 'node:http';

/**
 * A closed-loop load generator for mixed traffic: each connection runs one workload's steps
 * in a loop (a workload may chain requests, e.g. hold → book) and every answer is recorded per
 * operation and per second, so the run yields throughput and latency over time, not only totals.
 */
export interface Answer {
  status: number;
  body: string;
}

/** Sends one request, recorded under `operation` (e.g. `paste read`). */
export type Send = (
  operation: string,
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<Answer>;

/** One turn of a workload's loop on one connection; `context` keeps that connection's state. */
export type Step = (send: Send, context: Record<string, unknown>) => Promise<void>;

export interface Workload {
  name: string;
  /** Share of the connections. */
  weight: number;
  step: Step;
}

interface Bucket {
  count: number;
  errors: number;
  latencies: number[];
}

export class Recorder {
  readonly started = performance.now();
  readonly operations = new Map<string, { buckets: Bucket[]; statuses: Map<string, number> }>();

  record(operation: string, latencyMs: number, status: number | 'network', expected: boolean) {
    let entry = this.operations.get(operation);
    if (!entry) {
      entry = { buckets: [], statuses: new Map() };
      this.operations.set(operation, entry);
    }
    const second = Math.floor((performance.now() - this.started) / 1000);
    entry.buckets[second] ??= { count: 0, errors: 0, latencies: [] };
    const bucket = entry.buckets[second];
    bucket.count++;
    if (!expected) bucket.errors++;
    bucket.latencies.push(latencyMs);
    entry.statuses.set(String(status), (entry.statuses.get(String(status)) ?? 0) + 1);
  }
}

/** Sends through keep-alive sockets and records each answer under `operation` (set by the step). */
function sender(
  base: string,
  agent: Agent,
  recorder: Recorder,
  accept: (op: string, status: number) => boolean,
) {
  const url = new URL(base);
  const send: Send = (operation, method, path, body, headers = {}) =>
    new Promise<Answer>((resolve) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const start = performance.now();
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          method,
          path,
          agent,
          headers: payload ? { 'content-type': 'application/json', ...headers } : headers,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            recorder.record(operation, performance.now() - start, status, accept(operation, status));
            resolve({ status, body: Buffer.concat(chunks).toString() });
          });
        },
      );
      req.on('error', () => {
        recorder.record(operation, performance.now() - start, 'network', false);
        resolve({ status: 0, body: '' });
      });
      req.end(payload);
    });
  return send;
}

/**
 * Runs `connections` loops for `durationMs`, spread over the workloads by weight and over the
 * API processes round-robin. `accept` says which statuses are expected answers (e.g. a 409 for
 * seats someone else holds is a correct answer, not an error).
 */
export async function runMixed(options: {
  bases: string[];
  workloads: Workload[];
  connections: number;
  durationMs: number;
  accept: (operation: string, status: number) => boolean;
}): Promise<Recorder> {
  const recorder = new Recorder();
  const agents = options.bases.map(() => new Agent({ keepAlive: true, maxSockets: options.connections }));
  const total = options.workloads.reduce((sum, workload) => sum + workload.weight, 0);
  const plan: Workload[] = [];
  for (const workload of options.workloads) {
    const share = Math.max(1, Math.round((options.connections * workload.weight) / total));
    for (let i = 0; i < share; i++) plan.push(workload);
  }
  const deadline = performance.now() + options.durationMs;
  await Promise.all(
    plan.map(async (workload, index) => {
      const which = index % options.bases.length;
      const send = sender(options.bases[which], agents[which], recorder, options.accept);
      const context: Record<string, unknown> = { index };
      while (performance.now() < deadline) await workload.step(send, context);
    }),
  );
  for (const agent of agents) agent.destroy();
  return recorder;
}
