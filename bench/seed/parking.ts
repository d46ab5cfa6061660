import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseLotConfig } from '../../src/parking/lot/config.ts';
import { createLotRepository } from '../../src/parking/lot/repository.ts';
import { createLotService } from '../../src/parking/lot/service.ts';
import {
  atLeast,
  createUuid7Function,
  DAY_MS,
  inChunks,
  type SeedContext,
  type ServiceSeed,
  share,
} from './common.ts';

/**
 * The spec gives no parking volume. Assumed at full scale: a 20,000-spot lot (the size of a
 * city's garages together; bench's parking-entry runs 100,000 spots) where each spot sees 5
 * vehicles a day: 100,000 tickets a day, 36.5 M a year. Scaled down, the lot keeps at least the
 * demo lot's 100 spots.
 */
const SPOTS = 20_000;
const TICKETS_PER_SPOT_DAY = 5;
const DAYS = 365;
const SPOTS_PER_FLOOR = 500;
/** Share of the spots occupied now, by ACTIVE tickets. */
const OCCUPIED = 0.3;
/** Per floor, as the demo lot mixes them. */
const TYPE_SHARES = { MOTORCYCLE: 0.1, COMPACT: 0.6, LARGE: 0.15, HANDICAPPED: 0.05, ELECTRIC: 0.1 };

/** A lot file like demo-lot.json with this many spots; the app is started with it (PARKING_LOT_CONFIG). */
export function lotJson(spots: number) {
  const floors = Math.ceil(spots / SPOTS_PER_FLOOR);
  return {
    id: 'seed-lot',
    name: 'Seeded Car Park',
    timeZone: 'America/New_York',
    currency: 'USD',
    lostTicketFee: 50.0,
    pricing: {
      strategy: 'weekend',
      weekendMultiplier: 1.5,
      weekday: { strategy: 'hourly', rates: { MOTORCYCLE: 1.0, CAR: 2.0, BUS: 5.0 } },
    },
    entryPanels: [
      { id: 'entry-north', name: 'North entrance' },
      { id: 'entry-south', name: 'South entrance' },
    ],
    exitPanels: [
      { id: 'exit-north', name: 'North exit' },
      { id: 'exit-south', name: 'South exit' },
    ],
    floors: Array.from({ length: floors }, (_, floor) => ({
      floor,
      name: floor === 0 ? 'Ground floor' : `Level ${floor}`,
      spots: Object.fromEntries(
        Object.entries(TYPE_SHARES).map(([type, part]) => [
          type,
          Math.max(1, Math.round(part * share(spots, floors, floor))),
        ]),
      ),
    })),
  };
}

/**
 * The fee as src/parking/pricing computes it for that lot: whole hours (at least one) at the
 * vehicle's hourly rate, 1.5x (rounded half up) when the entry was on a Saturday or Sunday in the
 * lot's zone; a lost ticket at least the $50 fee.
 */
const FEE = `
  (select case when lost then greatest(5000, fee) else fee end
   from (select case when extract(dow from entry_time at time zone 'America/New_York') in (0, 6)
           then floor((base * 15000 + 5000) / 10000) else base end as fee
         from (select greatest(1, floor(extract(epoch from exit_time - entry_time) / 3600))
                 * case vehicle_type when 'MOTORCYCLE' then 100 when 'CAR' then 200 else 500 end as base) b) f)`;

/**
 * A period's closed tickets: car 85 %, motorcycle 12 %, bus 3 %, each on a random fitting spot,
 * staying 20 minutes to 11.5 hours (log-uniform: most stays short); 0.5 % lost their ticket; 2 % paid on a
 * second payment after a declined card. Plates come from a pool of regulars.
 */
const DRAW_TICKETS = `
  create temp table seed_tickets on commit drop as
  select pg_temp.uuid7(entry_time) as id, pg_temp.uuid7(exit_time) as payment_id, *, ${FEE}::bigint as amount
  from (
    select t.*, entry_time + interval '20 minutes' + exp(random() * 6.5) * interval '1 minute' as exit_time
    from (
      select 'S' || lpad((floor(random() * $3::int))::text, 7, '0') as plate, v.vehicle_type,
        f.spots[1 + floor(random() * cardinality(f.spots))::int] as spot_id,
        $1::timestamptz + random() * $2::interval as entry_time,
        random() < 0.005 as lost, random() < 0.02 as declined_first
      from (select case when d < 0.85 then 'CAR' when d < 0.97 then 'MOTORCYCLE' else 'BUS' end as vehicle_type
            from (select random() as d from generate_series(1, $4::int)) draw) v
      join seed_fitting f using (vehicle_type)
    ) t
  ) s
  where exit_time < $5::timestamptz`;

const INSERT_TICKETS = `
  insert into parking_tickets (id, license_plate, vehicle_type, spot_id, floor, spot_type, status, entry_time,
    entry_panel_id, exit_time, exit_panel_id, lost_at, paid_at, current_payment_id)
  select t.id, t.plate, t.vehicle_type, t.spot_id, s.floor, s.spot_type, 'PAID', t.entry_time,
    (array['entry-north', 'entry-south'])[1 + (get_byte(uuid_send(t.id), 15) % 2)], t.exit_time,
    (array['exit-north', 'exit-south'])[1 + (get_byte(uuid_send(t.id), 14) % 2)],
    case when t.lost then t.exit_time - interval '5 minutes' end, t.exit_time + interval '40 seconds',
    t.payment_id::text
  from seed_tickets t join parking_spots s on s.id = t.spot_id`;

/** The payments: the one that paid (its id is the ticket's current payment) and the declined ones. */
const DRAW_PAYMENTS = `
  create temp table seed_parking_payments on commit drop as
  select payment_id as id, id as ticket_id, amount, lost, plate, spot_id, 'COMPLETED' as status,
    exit_time as created_at, 1 as attempt, exit_time - entry_time as stay
  from seed_tickets
  union all
  select pg_temp.uuid7(exit_time - interval '1 second'), id, amount, lost, plate, spot_id, 'FAILED',
    exit_time - interval '1 second', 0, exit_time - entry_time
  from seed_tickets where declined_first`;

const INSERT_PAYMENTS = `
  with payments_module as (
    insert into payments (id, purpose, reference, description, amount_minor, currency, status, allow_retry,
      idempotency_key, return_url, attempts, gateway_charge_id, card_last4, card_brand, failure_code, failure_message,
      version, notified_version, last_event, created_at, updated_at, completed_at, failed_at)
    select id, 'parking', ticket_id::text,
      'Seeded Car Park: ' || case when lost then 'lost ticket' else 'parking' end || ' ' || plate || ', spot ' || spot_id,
      amount, 'USD', status, false, 'parking:' || ticket_id || ':' || attempt, null, 1,
      'ch_' || replace(id::text, '-', ''), case when status = 'FAILED' then '0002' else '4242' end, 'visa',
      case when status = 'FAILED' then 'card_declined' end, case when status = 'FAILED' then 'The card was declined' end,
      2, 2, case when status = 'FAILED' then 'payment.failed' else 'payment.completed' end,
      created_at, created_at + interval '30 seconds', case when status = 'COMPLETED' then created_at + interval '30 seconds' end,
      case when status = 'FAILED' then created_at + interval '30 seconds' end
    from seed_parking_payments
  ), charges as (
    insert into payments_sandbox_charges (id, idempotency_key, payment_id, status, amount_minor, currency, last4, brand,
      failure_code, failure_message, created_at, updated_at)
    select 'ch_' || replace(id::text, '-', ''), gen_random_uuid()::text, id::text,
      case when status = 'FAILED' then 'failed' else 'succeeded' end, amount, 'USD',
      case when status = 'FAILED' then '0002' else '4242' end, 'visa',
      case when status = 'FAILED' then 'card_declined' end, case when status = 'FAILED' then 'The card was declined' end,
      created_at, created_at + interval '30 seconds'
    from seed_parking_payments
  )
  insert into parking_payments (id, ticket_id, kind, amount_minor, currency, status, payment_url, failure_reason,
    duration_ms, created_at, updated_at)
  select id::text, ticket_id, case when lost then 'LOST' else 'EXIT' end, amount, 'USD', status,
    $1 || '/pay/' || id, case when status = 'FAILED' then 'card_declined' end,
    (extract(epoch from stay) * 1000)::bigint, created_at, created_at + interval '30 seconds'
  from seed_parking_payments`;

/** Free spots per vehicle type, for drawing a fitting one (ranks come from the app's lot sync). */
async function fittingSpots(context: SeedContext): Promise<void> {
  await context.client.query(
    `create temp table seed_fitting as
     select 'MOTORCYCLE' as vehicle_type, array_agg(id) as spots from parking_spots where rank_motorcycle is not null
     union all select 'CAR', array_agg(id) from parking_spots where rank_car is not null
     union all select 'BUS', array_agg(id) from parking_spots where rank_bus is not null`,
  );
}

async function insertPeriod(
  context: SeedContext,
  start: Date,
  spanMs: number,
  count: number,
  baseUrl: string,
) {
  const { client } = context;
  await client.query('begin');
  await client.query(DRAW_TICKETS, [
    start,
    `${spanMs} milliseconds`,
    atLeast(100, count),
    count,
    context.now,
  ]);
  await client.query(INSERT_TICKETS);
  await client.query(DRAW_PAYMENTS);
  await client.query(INSERT_PAYMENTS, [baseUrl]);
  await client.query('commit');
}

/**
 * The cars parked now: ACTIVE tickets on 30 % of the spots, each spot's `ticket_id` and
 * `occupied_at` pointing back at its ticket as an entry leaves them (the boards count these).
 */
async function insertParked(context: SeedContext): Promise<void> {
  await context.client.query(
    `with parked as (
       select s.id as spot_id, s.floor, s.spot_type,
         case s.spot_type when 'MOTORCYCLE' then 'MOTORCYCLE' when 'LARGE' then
           case when random() < 0.2 then 'BUS' else 'CAR' end else 'CAR' end as vehicle_type,
         $1::timestamptz - random() * interval '8 hours' as entry_time, row_number() over () as n
       from parking_spots s where random() < $2::float8
     ), tickets as (
       insert into parking_tickets (id, license_plate, vehicle_type, spot_id, floor, spot_type, status, entry_time,
         entry_panel_id)
       select pg_temp.uuid7(entry_time), 'P' || lpad(n::text, 7, '0'), vehicle_type, spot_id, floor, spot_type,
         'ACTIVE', entry_time, 'entry-north'
       from parked
       returning id, spot_id, entry_time
     )
     update parking_spots s set ticket_id = t.id, occupied_at = t.entry_time from tickets t where s.id = t.spot_id`,
    [context.now, OCCUPIED],
  );
}

async function run(context: SeedContext): Promise<Record<string, string>> {
  const spots = atLeast(100, SPOTS * context.scale);
  const lotPath = join(tmpdir(), `${context.databaseName}-lot.json`);
  const json = lotJson(spots);
  writeFileSync(lotPath, JSON.stringify(json, null, 2));
  // The app's own sync writes the spots, with the offering ranks it computes from the lot file.
  const lot = parseLotConfig(json, lotPath);
  await createLotService({ repository: createLotRepository(context.database.db), lot }).syncSpots();
  await createUuid7Function(context.client);
  await fittingSpots(context);
  const total = Math.round(SPOTS * TICKETS_PER_SPOT_DAY * DAYS * context.scale);
  const periods = Math.ceil(DAYS / 7);
  const spanMs = (DAYS * DAY_MS) / periods;
  const first = context.now.getTime() - DAYS * DAY_MS;
  await inChunks(
    context,
    'parking weeks',
    periods,
    (period) =>
      insertPeriod(
        context,
        new Date(first + period * spanMs),
        spanMs,
        share(total, periods, period),
        context.baseUrl,
      ),
    13,
  );
  await insertParked(context);
  return { PARKING_LOT_CONFIG: lotPath };
}

export const parkingSeed: ServiceSeed = {
  name: 'parking',
  recordTable: 'parking_tickets',
  recordName: 'ticket',
  recordTables: ['parking_tickets', 'parking_payments'],
  sharedRows: [
    { table: 'payments', where: `purpose = 'parking'` },
    {
      table: 'payments_sandbox_charges',
      where: `id in (select gateway_charge_id from payments where purpose = 'parking')`,
    },
  ],
  run,
};
