import assert from 'node:assert/strict';
import { type RunningServer, startServer } from '../support/browser.ts';
import { uniqueName } from '../support/platform.ts';
import { type Answer, waitForRecovery, withPg } from './harness.ts';
import { parkingEnv } from './parking-workload.ts';

/**
 * A real server process on PostgreSQL + Redis running paste (the database holds the pastes,
 * Redis the read cache and the spam limits) and parking (each entry takes a spot in one transaction).
 */
export async function startPasteServer(extraEnv: Record<string, string> = {}) {
  const applicationName = uniqueName('app');
  const env = {
    SERVICES: 'paste,parking',
    PGAPPNAME: applicationName,
    // The load comes from one address; the spam limit is not what is under test.
    PASTE_RATE_ANON: '1000000/600',
    ...parkingEnv(),
    ...extraEnv,
  };
  const server = await startServer(env);
  return { server, env, schema: server.schema!, applicationName, stop: () => server.stop() };
}

export const createPaste = (server: RunningServer) => (content: string) =>
  fetch(`${server.url}/api/v1/paste`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ content }),
  });

/**
 * Waits until pastes can be created again after a fault. Returns how many probes it sent: each
 * may have stored a paste that no load answer counts.
 */
export async function pasteProbesUntilRecovered(server: RunningServer): Promise<number> {
  let probes = 0;
  await waitForRecovery(async () => {
    probes++;
    return (await createPaste(server)('after the fault')).status === 201;
  });
  return probes;
}

/**
 * Every paste answered 201 can be read back with its content; no content is stored twice.
 * `probes`: pastes sent besides the load (pasteProbesUntilRecovered), which may be stored too.
 */
export async function assertPastesKept(server: RunningServer, schema: string, answers: Answer[], probes = 0) {
  const accepted = answers.filter((answer) => answer.status === 201);
  assert.ok(accepted.length > 0, 'the load created nothing');
  for (const answer of accepted) {
    const { short_url: shortUrl } = JSON.parse(answer.body) as { short_url: string };
    const response = await fetch(`${server.url}/${shortUrl}/raw`);
    assert.equal(response.status, 200, `accepted paste ${shortUrl} is lost`);
    assert.equal(await response.text(), answer.sent);
  }
  const rows = await withPg(async (client) => {
    const result = await client.query(`select count(*)::int as n from "${schema}".pastes`);
    return result.rows[0].n as number;
  });
  // A 503 whose commit landed before the connection died may have stored one more; never fewer.
  assert.ok(rows >= accepted.length, `${rows} pastes stored for ${accepted.length} accepted`);
  assert.ok(
    rows <= answers.length + probes,
    `${rows} pastes stored for ${answers.length} requests and ${probes} probes: some were done twice`,
  );
  return { accepted: accepted.length, stored: rows };
}
