import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { type RunningServer, startServer } from '../../../test/support/browser.ts';
import {
  lotJson,
  naiveEntryRepository,
  parkingServiceWith,
  writeLot,
} from '../../../test/support/parking.ts';
import {
  createTestApp,
  dropNamespace,
  realServices,
  testConfig,
  uniqueName,
} from '../../../test/support/platform.ts';
import { AppError } from '../../platform/errors.ts';

/**
 * Races against real PostgreSQL with two app processes on one schema: the database must be the
 * arbiter, whichever process a request lands on. Skipped without TEST_DATABASE_URL.
 */
const skip = realServices.databaseUrl ? false : 'needs TEST_DATABASE_URL (a real PostgreSQL)';
/** The servers run in development mode: the lot's panels use the development operator key. */
const PANEL = { 'x-operator-key': testConfig().operatorKeys[0].key };
const TEN_SPOTS = lotJson({
  floors: [
    { floor: 1, spots: { COMPACT: 5 } },
    { floor: 2, spots: { COMPACT: 5 } },
  ],
});

interface Lot {
  servers: RunningServer[];
  db: pg.Client;
  close(): Promise<void>;
}

/** Two processes on one schema and one pub/sub namespace, plus a client to inspect the tables. */
async function twoProcesses(lot: unknown = TEN_SPOTS): Promise<Lot> {
  const schema = uniqueName('race');
  const namespace = uniqueName('r');
  const shared = {
    SERVICES: 'parking',
    DATABASE_SCHEMA: schema,
    NAMESPACE: namespace,
    PARKING_LOT_CONFIG: writeLot(lot),
  };
  const first = await startServer(shared); // migrates and syncs the spots first
  const db = new pg.Client({
    connectionString: realServices.databaseUrl,
    options: `-c search_path=${schema}`,
  });
  await db.connect();
  const second = await startServer(shared);
  return {
    servers: [first, second],
    db,
    async close() {
      await Promise.all([first.stop(), second.stop()]);
      await db.end();
      await dropNamespace({ ...realServices, namespace }, schema);
    },
  };
}

type Outcome = { status: number; code?: string };

/** Sends `count` entries at once (each `enter(i)` a distinct plate) and counts the answers. */
async function entries(count: number, enter: (i: number) => Promise<Outcome>) {
  const outcomes = await Promise.all(Array.from({ length: count }, (_, i) => enter(i)));
  const tally: Record<string, number> = {};
  for (const { status, code } of outcomes) {
    const key = status === 201 ? '201' : `${status} ${code}`;
    tally[key] = (tally[key] ?? 0) + 1;
  }
  return tally;
}

/** Entry `i` over HTTP, alternating between the two processes. */
const enterOver = (lot: Lot) => (i: number) =>
  fetch(`${lot.servers[i % 2].url}/api/v1/parking/entry`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...PANEL },
    body: JSON.stringify({ licensePlate: `RACE${i}`, vehicleType: 'CAR' }),
  }).then(async (response) => ({
    status: response.status,
    code: ((await response.json()) as { code?: string }).code,
  }));

/** What must never be seen: more vehicles than spots, a spot with two vehicles, a spot and its ticket disagreeing. */
async function violations(db: pg.Client): Promise<string[]> {
  const found: string[] = [];
  const { rows: doubled } = await db.query(`select spot_id, count(*)::int as n from parking_tickets
    where status in ('ACTIVE', 'LOST') group by spot_id having count(*) > 1`);
  for (const row of doubled) found.push(`spot ${row.spot_id} holds ${row.n} vehicles`);
  const { rows: mismatched } = await db.query(`select t.id, t.spot_id from parking_tickets t
    join parking_spots s on s.id = t.spot_id
    where t.status in ('ACTIVE', 'LOST') and s.ticket_id is distinct from t.id`);
  for (const row of mismatched)
    found.push(`ticket ${row.id} is on ${row.spot_id}, but the spot says otherwise`);
  const { rows: orphans } = await db.query(`select s.id from parking_spots s
    where s.ticket_id is not null and not exists (select 1 from parking_tickets t where t.id = s.ticket_id and t.status in ('ACTIVE', 'LOST'))`);
  for (const row of orphans) found.push(`spot ${row.id} is occupied by no vehicle inside`);
  return found;
}

describe('race: 100 concurrent entries for 10 free spots from two processes', { skip }, () => {
  let lot: Lot;
  before(async () => {
    lot = await twoProcesses();
  });
  after(() => lot?.close());

  test('exactly 10 tickets, 90 parking_full, no spot with two vehicles', async () => {
    assert.deepEqual(await entries(100, enterOver(lot)), { '201': 10, '409 parking_full': 90 });
    const { rows } = await lot.db.query(
      `select count(*)::int as n, count(distinct spot_id)::int as spots from parking_tickets`,
    );
    assert.deepEqual(rows[0], { n: 10, spots: 10 });
    assert.deepEqual(await violations(lot.db), []);
    const availability = await (await fetch(`${lot.servers[1].url}/api/v1/parking/availability`)).json();
    assert.deepEqual(
      (availability as { floors: { compact: number }[] }).floors.map((floor) => floor.compact),
      [0, 0],
    );
  });
});

/**
 * Two app instances on one schema (two connection pools), each with a parking service whose
 * repository parks without the arbiter (test/support/parking.ts), and without the last-line
 * unique index. Same entries, same checks: they must fail.
 */
async function twoNaiveServices() {
  const namespace = uniqueName('race');
  const lotPath = writeLot(TEN_SPOTS);
  const env = { NAMESPACE: namespace, PARKING_LOT_CONFIG: lotPath };
  const apps = [
    await createTestApp({ services: ['parking'], env }),
    await createTestApp({ services: ['parking'], env }),
  ];
  const services = apps.map((t) =>
    parkingServiceWith(t, lotPath, naiveEntryRepository(t.adapters.database.db)),
  );
  const db = new pg.Client({
    connectionString: realServices.databaseUrl,
    options: `-c search_path=${namespace}`,
  });
  await db.connect();
  await db.query('drop index parking_tickets_spot_inside');
  return {
    db,
    enter: (i: number): Promise<Outcome> =>
      services[i % 2].enter({ licensePlate: `RACE${i}`, vehicleType: 'CAR' }).then(
        () => ({ status: 201 }),
        (error) => {
          if (error instanceof AppError) return { status: error.status, code: error.code };
          throw error;
        },
      ),
    async close() {
      await db.end();
      for (const t of apps.reverse()) await t.close();
    },
  };
}

describe('negative control: the same race without the database arbiter', { skip }, () => {
  let lot: Awaited<ReturnType<typeof twoNaiveServices>>;
  before(async () => {
    lot = await twoNaiveServices();
  });
  after(() => lot?.close());

  test('gives spots twice, and the checks above catch it', async () => {
    const tally = await entries(100, lot.enter);
    const problems = await violations(lot.db);
    assert.ok(
      (tally['201'] ?? 0) > 10 && problems.length > 0,
      `expected double allocation without the arbiter, got ${JSON.stringify(tally)} and ${problems.length} violations`,
    );
  });
});

describe('race: an exit and an entry on the same spot at the same moment', { skip }, () => {
  let lot: Lot;
  before(async () => {
    lot = await twoProcesses(lotJson({ floors: [{ floor: 1, spots: [{ id: 'ONLY', type: 'COMPACT' }] }] }));
  });
  after(() => lot?.close());

  const post = (server: RunningServer, path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...PANEL, ...headers },
      body: JSON.stringify(body),
    }).then(async (response) => ({
      status: response.status,
      body: (await response.json()) as Record<string, string>,
    }));

  test('never overlap: the entering car gets the spot only once the leaving one has paid and gone', async () => {
    let plate = 0;
    let inside = (
      await post(lot.servers[0], '/api/v1/parking/entry', { licensePlate: 'FIRST', vehicleType: 'CAR' })
    ).body;
    let roundsWithEntry = 0;
    for (let round = 0; round < 20; round++) {
      // While one process lets the car out (pay, free the spot), three clients keep trying to
      // enter through the other one, so some entry lands right as the spot is freed.
      let leaving = true;
      const hammer = async (worker: number) => {
        const results = [];
        while (leaving) {
          const server = lot.servers[(round + worker + 1) % 2];
          results.push(
            await post(server, '/api/v1/parking/entry', { licensePlate: `N${++plate}`, vehicleType: 'CAR' }),
          );
          if (results.at(-1)?.status === 201) break;
        }
        return results;
      };
      const tries = Promise.all([0, 1, 2].map(hammer));
      const left = await post(
        lot.servers[round % 2],
        '/api/v1/parking/exit',
        {
          ticketId: inside.ticketId,
          payment: { card_number: '4242424242424242', exp_month: 12, exp_year: 2030, cvc: '123' },
        },
        { 'idempotency-key': `race-${round}` },
      );
      leaving = false;
      const entries = (await tries).flat();
      assert.equal(left.status, 200, JSON.stringify(left.body));
      assert.equal(left.body.ticketStatus, 'PAID');
      const entered = entries.filter((entry) => entry.status === 201);
      assert.ok(entered.length <= 1, `round ${round}: ${entered.length} cars entered one spot`);
      assert.ok(entries.every((entry) => entry.status === 201 || entry.body.code === 'parking_full'));
      assert.deepEqual(await violations(lot.db), [], `round ${round}`);
      const { rows } = await lot.db.query(
        `select ticket_id::text as "ticketId" from parking_spots where id = 'ONLY'`,
      );
      if (entered[0]) {
        roundsWithEntry++;
        assert.equal(rows[0].ticketId, entered[0].body.ticketId, 'the freed spot holds the new car');
        inside = entered[0].body;
      } else {
        assert.equal(rows[0].ticketId, null);
        inside = (
          await post(lot.servers[0], '/api/v1/parking/entry', {
            licensePlate: `R${round}`,
            vehicleType: 'CAR',
          })
        ).body;
      }
    }
    const { rows } = await lot.db.query(
      `select status, count(*)::int as n from parking_tickets group by status order by status`,
    );
    assert.deepEqual(rows, [
      { status: 'ACTIVE', n: 1 },
      { status: 'PAID', n: 20 },
    ]);
    // The race was real: in some rounds a waiting car got the spot the moment it was freed.
    assert.ok(roundsWithEntry > 0, 'no entry ever met a freshly freed spot');
  });
});
