import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { createEvents } from '../../src/parking/boards/events.ts';
import {
  createEntryRepository,
  type EntryRepository,
  type NewTicket,
} from '../../src/parking/entry/repository.ts';
import { loadLotConfig } from '../../src/parking/lot/config.ts';
import { createParkingRepositories, createParkingService } from '../../src/parking/service.ts';
import type { TicketRow } from '../../src/parking/tables.ts';
import type { Db } from '../../src/platform/db/index.ts';
import { paymentsApi } from './payments.ts';
import type { TestApp } from './platform.ts';

/** Test helpers: lot configs written to temporary files (PARKING_LOT_CONFIG takes a path), requests. */
export interface LotJson {
  [key: string]: unknown;
  floors: { floor: number; spots: unknown; [key: string]: unknown }[];
}

export function lotJson(overrides: Partial<LotJson> = {}): LotJson {
  return {
    id: 'test-lot',
    name: 'Test lot',
    timeZone: 'America/New_York',
    currency: 'USD',
    lostTicketFee: 50,
    pricing: { strategy: 'hourly' },
    entryPanels: [{ id: 'in-1', name: 'Entrance' }],
    exitPanels: [{ id: 'out-1', name: 'Exit' }],
    floors: [
      { floor: 1, spots: { MOTORCYCLE: 1, COMPACT: 1, LARGE: 1, HANDICAPPED: 1, ELECTRIC: 1 } },
      { floor: 2, spots: { MOTORCYCLE: 1, COMPACT: 1, LARGE: 1, HANDICAPPED: 1, ELECTRIC: 1 } },
    ],
    ...overrides,
  };
}

export function writeLot(json: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'lot-')), 'lot.json');
  writeFileSync(path, typeof json === 'string' ? json : JSON.stringify(json, null, 2));
  return path;
}

/** Env for createTestApp / startServer running only parking on a given lot. */
export function lotEnv(json: unknown = lotJson()): Record<string, string> {
  return { PARKING_LOT_CONFIG: writeLot(json) };
}

/** A test app: entry and exit are called as the lot's panel (the development operator key). */
type Injector = Pick<TestApp, 'app' | 'asOperator'>;

export function card(number: string) {
  return { card_number: number, exp_month: 12, exp_year: 2030, cvc: '123' };
}

export async function enter(
  t: Injector,
  licensePlate: string,
  vehicleType = 'CAR',
  extra: Record<string, unknown> = {},
) {
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/parking/entry',
    headers: t.asOperator,
    payload: { licensePlate, vehicleType, ...extra },
  });
}

/** POST /exit; with a card it sends an Idempotency-Key (a fresh one unless given). */
export async function exit(
  t: Injector,
  ticketId: string,
  options: { card?: string; key?: string; panelId?: string } = {},
) {
  const payload: Record<string, unknown> = { ticketId };
  if (options.card) payload.payment = card(options.card);
  if (options.panelId) payload.panelId = options.panelId;
  const key = options.key ?? (options.card ? randomUUID() : undefined);
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/parking/exit',
    headers: key ? { ...t.asOperator, 'idempotency-key': key } : t.asOperator,
    payload,
  });
}

/**
 * Test-only: the entry repository with the entry a lock-free implementation would write (read
 * the first free spot, then take it, no row lock, no re-check). The race test's negative control
 * parks through it to show that its checks catch a spot given twice.
 */
export function naiveEntryRepository(db: Db): EntryRepository {
  const repository = createEntryRepository(db);
  async function park(ticket: NewTicket): Promise<TicketRow | undefined> {
    const rank = sql.ref(`rank_${ticket.vehicleType.toLowerCase()}`);
    const { rows: free } = await sql<{ id: string }>`select id from parking_spots
      where ticket_id is null and ${rank} is not null order by floor_order, ${rank}, position limit 1`.execute(
      db,
    );
    if (!free[0]) return undefined;
    await sql`update parking_spots set ticket_id = ${ticket.id}::uuid, occupied_at = ${ticket.entryTime}
      where id = ${free[0].id}`.execute(db);
    await sql`insert into parking_tickets (id, license_plate, vehicle_type, spot_id, floor, spot_type, status,
        entry_time, entry_panel_id)
      select ${ticket.id}::uuid, ${ticket.licensePlate}, ${ticket.vehicleType}, id, floor, spot_type, 'ACTIVE',
        ${ticket.entryTime}, ${ticket.entryPanelId}
      from parking_spots where id = ${free[0].id}`.execute(db);
    return repository.ticket(ticket.id);
  }
  return { ...repository, park, parkMany: (tickets) => Promise.all(tickets.map(park)) };
}

/** A parking service on a test app's database and payments whose entries go through `entry`. */
export function parkingServiceWith(t: TestApp, lotPath: string, entry: EntryRepository) {
  return createParkingService({
    repositories: { ...createParkingRepositories(t.adapters.database.db), entry },
    lot: loadLotConfig(lotPath),
    payments: paymentsApi(t.app),
    events: createEvents(t.adapters.pubsub, t.app.log),
    clock: t.clock,
    log: t.app.log,
  });
}
