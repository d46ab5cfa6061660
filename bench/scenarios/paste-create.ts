import type { Scenario } from '../run.ts';

/**
 * Creating 10 KB pastes on PostgreSQL (validation, SHA-256, zstd, id from the sequence, one
 * INSERT, cache fill) against a bare Fastify route that parses the same JSON body. Every
 * request carries a unique marker (autocannon's [<id>]), so no two pastes share content, as in
 * real traffic; the spam limit is lifted for the run.
 */
const body = JSON.stringify({ content: `[<id>]\n${sourceText(10_240 - 20)}`, expires_in: 86_400 });
const request = {
  method: 'POST' as const,
  headers: { 'content-type': 'application/json' },
  body,
  idReplacement: true,
};

const scenario: Scenario = {
  description: 'POST /api/v1/paste of 10 KB on PostgreSQL vs a bare Fastify POST parsing the same JSON',
  services: 'paste',
  backends: { postgres: true },
  env: { PASTE_RATE_ANON: '1000000000/600' },
  baseline: { kind: 'post' },
  target: 0.3,
  async prepare() {
    return { path: '/api/v1/paste', ...request };
  },
  baselineRequest: () => request,
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
