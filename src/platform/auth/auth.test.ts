import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { createTestClock } from '../clock.ts';
import { loadConfig } from '../config.ts';
import { registerProblemHandlers } from '../http/problem.ts';
import { registerPages } from '../pages/index.ts';
import { createMemoryRateLimiter } from '../ratelimit/index.ts';
import { type Access, type Auth, FAILED_CREDENTIALS, registerAuth } from './index.ts';
import { generateSecret } from './production.ts';
import { createUserTokens } from './user-tokens.ts';

const SERVICE_KEY = 'svc-key-0123456789abcdef';
const OPERATOR_KEY = 'op-key-0123456789abcdef';
const ADMIN_KEY = 'admin-key-0123456789abcdef';
const SECRET = 'test-secret-0123456789abcdef';
const ALICE = '0190a0a0-0000-7000-8000-000000000001';
const BOB = '0190a0a0-0000-7000-8000-000000000002';

async function appWith(routes: Record<string, Access>, env: Record<string, string> = {}) {
  const config = loadConfig([], {
    APP_SECRET: SECRET,
    ADMIN_API_KEY: ADMIN_KEY,
    SERVICE_KEYS: `backoffice notify:send ${SERVICE_KEY}`,
    OPERATOR_KEYS: `gate-1 parking:panel ${OPERATOR_KEY}`,
    ...env,
  });
  const app: FastifyInstance = Fastify({ logger: false });
  const auth: Auth = registerAuth(app, {
    config,
    limiter: createMemoryRateLimiter(),
    clock: createTestClock(),
  });
  registerProblemHandlers(app);
  registerPages(app, [], { development: config.development });
  auth.addScheme({
    name: 'pasteKey',
    openapi: { type: 'http', scheme: 'bearer' },
    resolve: async (request) => {
      const header = request.headers.authorization;
      if (!header?.startsWith('Bearer pk_')) return undefined;
      return header === 'Bearer pk_good' ? 'account-1' : null;
    },
  });
  for (const [url, access] of Object.entries(routes)) {
    const [method, path] = url.split(' ');
    app.route({
      method: method as 'GET',
      url: path,
      config: { access },
      schema: { hide: path.startsWith('/page') },
      handler: async (request) => ({ caller: request.caller }),
    });
  }
  await app.ready();
  return { app, auth, config };
}

const user = (id: string) => ({ authorization: `Bearer ${createUserTokens(SECRET).issue(id)}` });

test('each kind of credential is proven by the hook, and only the kinds a route accepts count', async () => {
  const { app } = await appWith({
    'POST /send': { service: 'notify:send', admin: true },
    'GET /users/:userId/prefs': { user: { param: 'userId' }, admin: true },
    'POST /exit': { operator: 'parking:panel' },
  });
  const send = (headers: Record<string, string>) => app.inject({ method: 'POST', url: '/send', headers });
  const none = await send({});
  assert.equal(none.statusCode, 401);
  assert.equal(none.headers['content-type'], 'application/problem+json; charset=utf-8');
  assert.match(String(none.headers['www-authenticate']), /x-api-key/);
  assert.deepEqual((await send({ 'x-api-key': SERVICE_KEY })).json().caller.kind, 'service');
  assert.deepEqual((await send({ 'x-admin-key': ADMIN_KEY })).json().caller.kind, 'admin');
  assert.equal((await send({ 'x-api-key': 'wrong-key-0123456789' })).statusCode, 401);
  assert.equal((await send({ 'x-admin-key': `${ADMIN_KEY}x` })).statusCode, 401);
  // A valid credential of a kind the route does not accept is no credential at all.
  assert.equal((await send({ 'x-operator-key': OPERATOR_KEY })).statusCode, 401);
  assert.equal((await send(user(ALICE))).statusCode, 401);

  const prefs = (id: string, headers: Record<string, string>) =>
    app.inject({ method: 'GET', url: `/users/${id}/prefs`, headers });
  assert.deepEqual((await prefs(ALICE, user(ALICE))).json().caller, { kind: 'user', userId: ALICE });
  assert.equal((await prefs(BOB, user(ALICE))).statusCode, 404, "another user's data does not exist");
  assert.equal((await prefs(BOB, { 'x-admin-key': ADMIN_KEY })).statusCode, 200);
  const forged = await prefs(ALICE, { authorization: 'Bearer UT1.x.forged' });
  assert.equal(forged.statusCode, 401);
  assert.equal(forged.headers['www-authenticate'], 'Bearer error="invalid_token"');

  const exit = await app.inject({
    method: 'POST',
    url: '/exit',
    headers: { 'x-operator-key': OPERATOR_KEY },
  });
  assert.deepEqual(exit.json().caller.name, 'gate-1');
  await app.close();
});

test('a key without the scope an operation needs is 403', async () => {
  const { app } = await appWith({ 'POST /contacts': { service: 'notify:contacts' } });
  const response = await app.inject({
    method: 'POST',
    url: '/contacts',
    headers: { 'x-api-key': SERVICE_KEY },
  });
  assert.equal(response.statusCode, 403);
  await app.close();
});

test('wrong credentials are throttled per address: past the limit even the right key is refused', async () => {
  const { app } = await appWith({ 'POST /send': { service: 'notify:send' } });
  const send = (key: string) => app.inject({ method: 'POST', url: '/send', headers: { 'x-api-key': key } });
  for (let i = 0; i < FAILED_CREDENTIALS.points; i++) {
    const wrong = await send(`guess-${i}-abcdefgh`);
    assert.equal(wrong.statusCode, 401);
    // Every limited answer says what is left (draft-ietf-httpapi-ratelimit-headers).
    assert.equal(wrong.headers['ratelimit-policy'], `"auth.failures";q=${FAILED_CREDENTIALS.points};w=600`);
    assert.match(
      String(wrong.headers.ratelimit),
      new RegExp(`^"auth\\.failures";r=${FAILED_CREDENTIALS.points - 1 - i};t=\\d+$`),
    );
  }
  const refused = await send('one-more-guess-abc');
  assert.equal(refused.statusCode, 429);
  assert.ok(Number(refused.headers['retry-after']) > 0);
  assert.match(String(refused.headers.ratelimit), /^"auth\.failures";r=0;t=\d+$/);
  assert.equal((await send(SERVICE_KEY)).statusCode, 429, 'a guess that happens to be right tells nothing');
  await app.close();
});

test('public routes with an account scheme: anonymous is public, a right key names the account, a wrong one is 401', async () => {
  const { app } = await appWith({ 'GET /paste': { public: true, account: 'pasteKey' } });
  const read = (authorization?: string) =>
    app.inject({ method: 'GET', url: '/paste', headers: authorization ? { authorization } : {} });
  assert.deepEqual((await read()).json().caller, { kind: 'public' });
  assert.deepEqual((await read('Bearer pk_good')).json().caller, {
    kind: 'account',
    scheme: 'pasteKey',
    userId: 'account-1',
  });
  assert.equal((await read('Bearer pk_bad')).statusCode, 401);
  await app.close();
});

test('a public page is public whatever other Authorization it carries: no sign-in redirect', async () => {
  const { app } = await appWith({ 'GET /page/paste': { public: true, account: 'pasteKey' } });
  for (const authorization of ['Basic dXNlcjpwYXNz', 'Bearer UT1.someone.else']) {
    const page = await app.inject({ method: 'GET', url: '/page/paste', headers: { authorization } });
    assert.equal(page.statusCode, 200, authorization);
    assert.deepEqual(page.json().caller, { kind: 'public' });
  }
  const owner = await app.inject({
    method: 'GET',
    url: '/page/paste',
    headers: { authorization: 'Bearer pk_good' },
  });
  assert.equal(owner.json().caller.userId, 'account-1');
  await app.close();
});

test('staff pages: development signs the demo operator in by itself, production sends the browser to sign in', async () => {
  const dev = await appWith(
    { 'GET /page/exit': { operator: 'parking:panel' }, 'POST /exit': { operator: 'parking:panel' } },
    {
      OPERATOR_KEYS: '',
    },
  );
  const page = await dev.app.inject({ method: 'GET', url: '/page/exit' });
  assert.equal(page.statusCode, 200);
  assert.equal(page.json().caller.name, 'demo');
  const cookie = String(page.headers['set-cookie']).split(';')[0];
  assert.match(String(page.headers['set-cookie']), /HttpOnly; SameSite=Strict/);
  const api = await dev.app.inject({ method: 'POST', url: '/exit', headers: { cookie } });
  assert.equal(api.statusCode, 200, 'the page session works for the API calls the page makes');
  assert.equal(
    (await dev.app.inject({ method: 'POST', url: '/exit' })).statusCode,
    401,
    'APIs never sign in by themselves',
  );
  await dev.app.close();

  const strong = generateSecret;
  const operatorKey = strong();
  const prod = await appWith(
    { 'GET /page/exit': { operator: 'parking:panel' } },
    {
      NODE_ENV: 'production',
      SERVICES: 'parking',
      PAYMENTS_SANDBOX: 'true',
      APP_SECRET: strong(),
      ADMIN_API_KEY: strong(),
      PAYMENT_WEBHOOK_SECRET: strong(),
      OPERATOR_KEYS: `gate-1 parking:panel ${operatorKey}`,
    },
  );
  const redirected = await prod.app.inject({ method: 'GET', url: '/page/exit?lane=2' });
  assert.equal(redirected.statusCode, 303);
  assert.equal(redirected.headers.location, '/sign-in?next=%2Fpage%2Fexit%3Flane%3D2');
  assert.equal(redirected.headers['set-cookie'], undefined);
  const signedIn = prod.auth.sessions.issue({ kind: 'operator', name: 'gate-1', scopes: ['parking:panel'] });
  const signedInPage = await prod.app.inject({
    method: 'GET',
    url: '/page/exit',
    headers: { cookie: `staff_session=${signedIn}` },
  });
  assert.equal(signedInPage.json().caller.name, 'gate-1');
  const forged = `${signedIn.slice(0, -2)}xx`;
  const refused = await prod.app.inject({
    method: 'GET',
    url: '/page/exit',
    headers: { cookie: `staff_session=${forged}` },
  });
  assert.equal(refused.statusCode, 303);
  await prod.app.close();
});

test('the access declaration becomes the operation security in OpenAPI', async () => {
  const { securityOf } = await import('./access.ts');
  assert.deepEqual(securityOf({ public: true }), []);
  assert.deepEqual(securityOf({ public: true, account: 'pasteKey' }), [{}, { pasteKey: [] }]);
  assert.deepEqual(securityOf({ service: 'notify:send', admin: true }), [
    { serviceKey: ['notify:send'] },
    { adminKey: [] },
    { staffSession: ['admin'] },
  ]);
  assert.deepEqual(securityOf({ operator: 'parking:panel' }), [
    { operatorKey: ['parking:panel'] },
    { staffSession: ['parking:panel'] },
  ]);
});

test('user ids compare exactly, UUIDs without case', async () => {
  const { sameUser } = await import('./caller.ts');
  assert.equal(sameUser('alice', 'ALICE'), false);
  assert.equal(sameUser(ALICE, ALICE.toUpperCase()), true);
  const { app } = await appWith({ 'GET /users/:userId/prefs': { user: { param: 'userId' } } });
  const read = (path: string, as: string) => app.inject({ url: `/users/${path}/prefs`, headers: user(as) });
  assert.equal((await read('ALICE', 'alice')).statusCode, 404, "a token for alice is not ALICE's");
  assert.equal((await read('alice', 'alice')).statusCode, 200);
  assert.equal((await read(ALICE.toUpperCase(), ALICE)).statusCode, 200);
  await app.close();
});
