import Fastify from 'fastify';

/**
 * The bare baseline: a Fastify app with one route and nothing else (no hooks, no logging), in
 * its own process. BASELINE_KIND picks the route shape the scenario compares against:
 *   get   GET /target answers BASELINE_BODY_BYTES of text (or a small JSON)
 *   post  POST /target parses the JSON body and answers 201 with a small JSON
 */
const kind = process.env.BASELINE_KIND ?? 'get';
const bytes = Number(process.env.BASELINE_BODY_BYTES ?? '0');
const body = bytes > 0 ? 'x'.repeat(bytes) : undefined;

const app = Fastify({ logger: false, bodyLimit: 16 * 1024 * 1024 });
if (kind === 'get') {
  app.get('/target', async (_request, reply) => {
    if (body) return reply.type('text/plain; charset=utf-8').send(body);
    return { ok: true };
  });
} else {
  app.post('/target', async (request, reply) => {
    const parsed = request.body as Record<string, unknown>;
    return reply.code(201).send({ ok: true, fields: Object.keys(parsed ?? {}).length });
  });
}
app.get('/ready', async () => 'ok');
const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.stdout.write(`listening ${address}\n`);
