import type { Scenario } from '../run.ts';

/** Platform overhead: request id, security headers, error handler and metrics on a tiny GET. */
const scenario: Scenario = {
  description: 'GET /health/live through the platform vs a bare Fastify GET of the same JSON',
  services: 'paste',
  baseline: { kind: 'get' },
  target: 0.85,
  async prepare() {
    return { path: '/health/live' };
  },
  baselineRequest: () => ({}),
};
export default scenario;
