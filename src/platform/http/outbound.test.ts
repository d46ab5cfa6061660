import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  createOutboundGuard,
  OutboundRefused,
  parseAllowList,
  type ResolvedAddress,
  refusedRange,
} from './outbound.ts';

// Only loopback servers are ever connected to: public addresses below are checked, never called.

describe('refusedRange', () => {
  const refused: [string, string][] = [
    ['0.0.0.0', '"this network"'],
    ['0.1.2.3', '"this network"'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['100.127.255.254', 'shared (CGNAT)'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.8', 'IETF protocol'],
    ['192.0.2.1', 'documentation'],
    ['192.88.99.1', '6to4 relay'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fec0::1', 'site-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456:789a::1', 'unique-local'],
    ['ff02::1', 'multicast'],
    ['ff0e::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['2001::1', 'IETF protocol'],
    ['2001:2::1', 'IETF protocol'],
    ['2002:a00:1::1', '6to4'],
    ['100::1', 'discard-only'],
    ['64:ff9b:1::a00:1', 'local-use NAT64'],
    ['5f00::1', 'SRv6'],
    ['::1:0:0:1', 'reserved'],
    ['4000::1', 'reserved'],
    ['e000::1', 'reserved'],
  ];
  for (const [address, range] of refused) {
    test(`${address} is refused (${range})`, () => assert.equal(refusedRange(address), range));
  }

  const embedded = [
    '127.0.0.1',
    '10.1.2.3',
    '172.16.5.4',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
  ];
  for (const v4 of embedded) {
    test(`${v4} in every IPv6 form is refused`, () => {
      const [a, b, c, d] = v4.split('.').map(Number);
      const hex = `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
      for (const form of [
        `::ffff:${v4}`,
        `::ffff:${hex}`,
        `::${v4}`,
        `64:ff9b::${v4}`,
        `64:ff9b::${hex}`,
        `::ffff:0:${v4}`,
      ]) {
        assert.ok(refusedRange(form), `${form} must be refused`);
      }
    });
  }

  for (const address of [
    '8.8.8.8',
    '1.1.1.1',
    '142.250.74.110',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '192.169.0.1',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200a',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
  ]) {
    test(`${address} is public`, () => assert.equal(refusedRange(address), undefined));
  }
});

describe('parseAllowList', () => {
  test('hosts, addresses and CIDRs; a malformed entry throws', () => {
    const allow = parseAllowList(' Push.Test., 127.0.0.1 ,10.0.0.0/8,[::1],fd00::/8,');
    assert.deepEqual([...allow.hosts], ['push.test']);
    assert.ok(allow.addresses.check('127.0.0.1', 'ipv4'));
    assert.ok(allow.addresses.check('10.9.9.9', 'ipv4'));
    assert.ok(allow.addresses.check('::1', 'ipv6'));
    assert.ok(allow.addresses.check('fd00::5', 'ipv6'));
    assert.ok(!allow.addresses.check('127.0.0.2', 'ipv4'));
    for (const bad of ['10.0.0.0/33', 'http://x', 'a b', '10.0.0.0/8/1', '::1/129', '-x.test']) {
      assert.throws(() => parseAllowList(bad), /neither|too long/, bad);
    }
  });
});

/** A resolver that answers from a table, and counts its calls per host. */
function resolver(table: Record<string, string[] | (() => string[]) | Error>) {
  const calls: string[] = [];
  const resolve = async (host: string): Promise<ResolvedAddress[]> => {
    calls.push(host);
    const entry = table[host];
    if (entry === undefined) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    if (entry instanceof Error) throw entry;
    const addresses = typeof entry === 'function' ? entry() : entry;
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolve, calls };
}

const refusal =
  (message: RegExp, transient = false) =>
  (error: unknown) => {
    assert.ok(error instanceof OutboundRefused, String(error));
    assert.match(error.message, message);
    assert.equal(error.transient, transient);
    return true;
  };

describe('check', () => {
  const { resolve } = resolver({
    'push.example.net': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    'internal.example.net': ['10.1.2.3'],
    'mixed.example.net': ['93.184.215.14', '192.168.1.10'],
    'mapped.example.net': ['::ffff:127.0.0.1'],
    localhost: ['127.0.0.1', '::1'],
    'flaky.example.net': Object.assign(new Error('try again'), { code: 'EAI_AGAIN' }),
    'slow.example.net': () => {
      throw new Error('unreachable');
    },
  });
  const guard = createOutboundGuard({ resolve });

  test('an https URL whose host resolves to public addresses passes', async () => {
    const target = await guard.check('https://push.example.net/send/abc');
    assert.equal(target.host, 'push.example.net');
    assert.deepEqual(target.address, { address: '93.184.215.14', family: 4 });
    assert.equal((await guard.check('https://8.8.8.8:8443/x')).address?.address, '8.8.8.8');
    assert.equal((await guard.check('https://[2606:4700:4700::1111]/x')).address?.family, 6);
  });

  test('a host name resolving to a private, loopback or mapped address is refused', async () => {
    await assert.rejects(
      guard.check('https://internal.example.net/x'),
      refusal(/^internal\.example\.net resolves to a private address$/),
    );
    await assert.rejects(guard.check('https://localhost:8443/'), refusal(/resolves to a loopback/));
    await assert.rejects(guard.check('https://mapped.example.net/'), refusal(/resolves to a loopback/));
    // One private answer among public ones is enough: the connection could be steered to it.
    await assert.rejects(guard.check('https://mixed.example.net/'), refusal(/resolves to a private/));
  });

  test('address literals in any spelling are refused', async () => {
    for (const [url, message] of [
      ['https://127.0.0.1/', /^127\.0\.0\.1 is a loopback address$/],
      ['https://2130706433/', /127\.0\.0\.1 is a loopback/],
      ['https://0x7f.1/', /127\.0\.0\.1 is a loopback/],
      ['https://[::1]/', /::1 is a loopback/],
      ['https://[::ffff:169.254.169.254]/latest', /link-local/],
      ['https://[::ffff:10.0.0.1]/', /private/],
      ['https://[fd00::1]/', /unique-local/],
      ['https://169.254.169.254/latest/meta-data', /link-local/],
      ['https://0.0.0.0/', /"this network"/],
    ] as const) {
      await assert.rejects(guard.check(url), refusal(message), url);
    }
  });

  test('only https, no credentials, a valid URL; unknown hosts do not resolve', async () => {
    await assert.rejects(guard.check('http://push.example.net/'), refusal(/only https/));
    await assert.rejects(guard.check('file:///etc/passwd'), refusal(/only https/));
    await assert.rejects(guard.check('https://u:p@push.example.net/'), refusal(/credentials/));
    await assert.rejects(guard.check('not a url'), refusal(/not valid/));
    await assert.rejects(guard.check('https://nowhere.example.net/'), refusal(/does not resolve/));
    await assert.rejects(
      guard.check('https://flaky.example.net/'),
      refusal(/could not be resolved right now/, true),
    );
  });

  test('a resolver that never answers is given up on', async () => {
    const hanging = createOutboundGuard({ resolve: () => new Promise(() => {}), resolveTimeoutMs: 50 });
    await assert.rejects(hanging.check('https://slow.example.net/'), refusal(/right now/, true));
  });

  test('the allow-list lets named hosts and CIDRs through, and nothing else', async () => {
    const allowing = createOutboundGuard({ resolve, allow: ['internal.example.net', '127.0.0.0/8'] });
    assert.equal((await allowing.check('https://internal.example.net/')).host, 'internal.example.net');
    assert.equal((await allowing.check('https://127.0.0.9:4443/')).address?.address, '127.0.0.9');
    await assert.rejects(allowing.check('https://[::1]/'), refusal(/loopback/));
    await assert.rejects(allowing.check('https://192.168.0.1/'), refusal(/private/));
    // An allowed name is not resolved at check time (test hosts need no DNS).
    assert.equal((await allowing.check('https://internal.example.net./x')).address, undefined);
  });
});

/** Self-signed certificate for the given subjectAltName, trusted by the returned agent only. */
function certificate(altNames: string) {
  const dir = mkdtempSync(join(tmpdir(), 'outbound-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=outbound test',
        '-addext',
        `subjectAltName=${altNames}`,
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('request', () => {
  const tls = certificate('DNS:push.test,IP:127.0.0.1,IP:127.0.0.2');
  const other = certificate('DNS:other.test');
  let agent: Agent;
  const servers: Server[] = [];
  const hits: { server: string; path: string }[] = [];
  let port = 0;

  /** A server on `host` (one port for all of them) that answers `body` with 200. */
  async function serve(host: string, key: Buffer, cert: Buffer, body: (path: string) => string | Buffer) {
    const server = createServer({ key, cert }, (request, response) => {
      hits.push({ server: host, path: request.url! });
      response.writeHead(200, { 'content-type': 'text/plain' }).end(body(request.url!));
    });
    await new Promise<void>((resolve) => server.listen(port, host, resolve));
    port = (server.address() as AddressInfo).port;
    servers.push(server);
  }

  before(async () => {
    agent = new Agent({ ca: [tls.cert, other.cert] });
    await serve('127.0.0.1', tls.key, tls.cert, (path) =>
      path === '/big' ? Buffer.alloc(1_000_000, 'a') : 'from the checked address',
    );
    await serve('127.0.0.2', tls.key, tls.cert, () => 'SECRET from the private address');
  });
  after(async () => {
    agent.destroy();
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  });

  test('rebinding: the connection goes to the checked address, not to a later DNS answer', async () => {
    // 127.0.0.1 plays the public address (allow-listed), 127.0.0.2 the private one the name turns to.
    let answers = 0;
    const { resolve, calls } = resolver({
      'push.test': () => (answers++ === 0 ? ['127.0.0.1'] : ['127.0.0.2']),
    });
    const guard = createOutboundGuard({ resolve, allow: ['127.0.0.1'] });
    hits.length = 0;
    const response = await guard.request(`https://push.test:${port}/first`, { agent });
    assert.equal(response.status, 200);
    assert.equal(response.body.toString(), 'from the checked address');
    assert.deepEqual(hits, [{ server: '127.0.0.1', path: '/first' }]);
    assert.deepEqual(calls, ['push.test'], 'one DNS answer, used for the check and the connection');
    // The next request checks again: the name now resolves to a refused address, nothing is sent.
    await assert.rejects(
      guard.request(`https://push.test:${port}/second`, { agent }),
      refusal(/push\.test resolves to a loopback address/),
    );
    assert.equal(hits.length, 1);
  });

  test('TLS still verifies the certificate against the host name', async () => {
    const { resolve } = resolver({ 'other.test': ['127.0.0.1'], 'push.test': ['127.0.0.1'] });
    const guard = createOutboundGuard({ resolve, allow: ['127.0.0.1'] });
    // The server at the checked address shows a certificate for push.test, not other.test.
    await assert.rejects(guard.request(`https://other.test:${port}/`, { agent }), /altnames|certificate/i);
    assert.equal((await guard.request(`https://push.test:${port}/`, { agent })).status, 200);
  });

  test('at most maxBytes of an answer are read', async () => {
    const guard = createOutboundGuard({ allow: ['127.0.0.1'] });
    const response = await guard.request(`https://127.0.0.1:${port}/big`, { agent, maxBytes: 2048 });
    assert.equal(response.status, 200);
    assert.equal(response.body.length, 2048);
    assert.equal(response.truncated, true);
    const small = await guard.request(`https://127.0.0.1:${port}/small`, { agent });
    assert.equal(small.truncated, false);
  });

  test('without the allow-list, loopback is never contacted', async () => {
    hits.length = 0;
    const guard = createOutboundGuard({ resolve: resolver({ 'push.test': ['127.0.0.1'] }).resolve });
    await assert.rejects(guard.request(`https://127.0.0.1:${port}/`, { agent }), refusal(/loopback/));
    await assert.rejects(guard.request(`https://push.test:${port}/`, { agent }), refusal(/loopback/));
    await assert.rejects(
      guard.request(`https://[::ffff:127.0.0.2]:${port}/`, { agent }),
      refusal(/loopback/),
    );
    assert.equal(hits.length, 0);
  });
});
