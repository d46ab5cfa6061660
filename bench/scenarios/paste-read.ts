import { createFourServicesClient } from '../../clients/typescript/index.ts';
import type { Scenario } from '../run.ts';

/**
 * The hot path of the text sharing service: reading a cached 10 KB paste through the API
 * (request id, security headers, metrics, routing, view counting), against a bare Fastify
 * route that answers 10 KB of text.
 */
const scenario: Scenario = {
  description: 'GET /api/v1/paste/{short_url} of a cached 10 KB paste vs a bare Fastify GET of 10 KB',
  services: 'paste',
  baseline: { kind: 'get', bodyBytes: 10_240 },
  target: 0.7,
  async prepare(baseUrl) {
    // Set up through the generated client, as an API user would.
    const api = createFourServicesClient({ baseUrl });
    const created = await api.POST('/api/v1/paste', {
      body: { content: sourceText(10_240), syntax: 'javascript' },
    });
    if (!created.data)
      throw new Error(`create failed: ${created.response.status} ${JSON.stringify(created.error)}`);
    const { short_url } = created.data;
    const read = await api.GET('/api/v1/paste/{short_url}', { params: { path: { short_url } } });
    if (!read.data) throw new Error(`read failed: ${read.response.status}`);
    return { path: `/api/v1/paste/${short_url}` };
  },
  baselineRequest: () => ({}),
  async verify(baseUrl) {
    const metrics = await (await fetch(`${baseUrl}/metrics`)).text();
    const loads = /^paste_cache_loads_total (\d+)/m.exec(metrics)?.[1] ?? '?';
    const local = /^paste_reads_total\{layer="local"\} (\d+)/m.exec(metrics)?.[1] ?? '?';
    return [`database loads during the run: ${loads}; reads answered from the local cache: ${local}`];
  },
};
export default scenario;

/** About `bytes` of source-code-like text (what pastes mostly are), ending at a line break. */
function sourceText(bytes: number): string {
  const line = '  const total = items.reduce((sum, item) => sum + item.price * item.quantity, 0); // keep\n';
  return line
    .repeat(Math.ceil(bytes / line.length))
    .slice(0, bytes - 1)
    .concat('\n');
}
