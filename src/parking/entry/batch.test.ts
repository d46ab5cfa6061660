import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TicketRow } from '../tables.ts';
import { newTicketCode } from '../tickets/codes.ts';
import { createEntryBatcher } from './batch.ts';
import type { NewTicket } from './repository.ts';

/** A fake repository recording how the batcher used it; spots are handed out in call order. */
function fakeRepository(options: { spots: number; failBatch?: boolean }) {
  const calls: string[] = [];
  let free = options.spots;
  const row = (ticket: NewTicket) => ({ id: ticket.id, licensePlate: ticket.licensePlate }) as TicketRow;
  return {
    calls,
    async park(ticket: NewTicket) {
      calls.push(`park ${ticket.licensePlate}`);
      if (ticket.licensePlate === 'DUP')
        throw Object.assign(new Error('duplicate'), { code: '23505', severity: 'ERROR' });
      if (free === 0) return undefined;
      free--;
      return row(ticket);
    },
    async parkMany(tickets: NewTicket[]) {
      calls.push(`parkMany ${tickets.map((ticket) => ticket.licensePlate).join(',')}`);
      if (options.failBatch)
        throw Object.assign(new Error('duplicate'), { code: '23505', severity: 'ERROR' });
      return tickets.map((ticket) => {
        if (free === 0) return undefined;
        free--;
        return row(ticket);
      });
    },
  };
}

let ids = 0;
const ticket = (licensePlate: string, vehicleType: NewTicket['vehicleType'] = 'CAR'): NewTicket => ({
  id: `t${ids++}`,
  licensePlate,
  vehicleType,
  needs: [],
  entryTime: new Date(0),
  entryPanelId: null,
  code: newTicketCode(),
});

test('a lone entry goes through the single-entry park', async () => {
  const repository = fakeRepository({ spots: 5 });
  const batcher = createEntryBatcher(repository);
  assert.equal((await batcher.park(ticket('A')))?.licensePlate, 'A');
  assert.deepEqual(repository.calls, ['park A']);
});

test('entries arriving together go in one batch, in arrival order, one kind of vehicle per batch', async () => {
  const repository = fakeRepository({ spots: 10 });
  const batcher = createEntryBatcher(repository, { maxInFlight: 1 });
  const results = await Promise.all([
    batcher.park(ticket('A')),
    batcher.park(ticket('B')),
    batcher.park(ticket('M', 'MOTORCYCLE')),
    batcher.park(ticket('C')),
  ]);
  assert.deepEqual(
    results.map((row) => row?.licensePlate),
    ['A', 'B', 'M', 'C'],
  );
  assert.deepEqual(repository.calls, ['parkMany A,B,C', 'park M']);
});

test('tickets the batch left without a spot are decided one by one: the answer a single entry gets', async () => {
  const repository = fakeRepository({ spots: 2 });
  const batcher = createEntryBatcher(repository);
  const results = await Promise.all(['A', 'B', 'C', 'D'].map((plate) => batcher.park(ticket(plate))));
  assert.deepEqual(
    results.map((row) => row?.licensePlate),
    ['A', 'B', undefined, undefined],
  );
  assert.deepEqual(repository.calls, ['parkMany A,B,C,D', 'park C', 'park D']);
});

test('a failed batch (e.g. a plate already inside) is retried entry by entry; each gets its own error or spot', async () => {
  const repository = fakeRepository({ spots: 5, failBatch: true });
  const batcher = createEntryBatcher(repository);
  const results = await Promise.allSettled(['A', 'DUP', 'B'].map((plate) => batcher.park(ticket(plate))));
  assert.equal(results[0].status === 'fulfilled' && results[0].value?.licensePlate, 'A');
  assert.equal(results[1].status === 'rejected' && (results[1].reason as { code: string }).code, '23505');
  assert.equal(results[2].status === 'fulfilled' && results[2].value?.licensePlate, 'B');
});

test('the same plate twice never shares a batch', async () => {
  const repository = fakeRepository({ spots: 5 });
  const batcher = createEntryBatcher(repository, { maxInFlight: 1 });
  await Promise.all(['A', 'A', 'B'].map((plate) => batcher.park(ticket(plate))));
  assert.deepEqual(repository.calls, ['parkMany A,B', 'park A']);
});
