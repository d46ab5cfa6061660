import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { browserSuite, fillCard, screenshot } from '../../../test/support/browser.ts';
import { lotJson, writeLot } from '../../../test/support/parking.ts';
import { TEST_CARDS } from '../../payments/api.ts';

const suite = browserSuite(() => {
  const lot = lotJson({
    name: 'Harbour Street Car Park',
    floors: [
      {
        floor: 0,
        name: 'Ground floor',
        spots: { MOTORCYCLE: 1, COMPACT: 2, LARGE: 1, HANDICAPPED: 1, ELECTRIC: 1 },
      },
      { floor: 1, name: 'Level 1', spots: { COMPACT: 3, LARGE: 1 } },
    ],
  });
  return { SERVICES: 'parking', PARKING_LOT_CONFIG: writeLot(lot) };
});
const { skip } = suite;

const count = (page: Page, board: string, type: string) =>
  page.locator(`[data-board="${board}"] [data-type="${type}"] [data-free]`);

async function enterAt(entry: Page, plate: string, vehicle: string) {
  await entry.fill('#plate', plate);
  await entry.check(`input[name="vehicleType"][value="${vehicle}"]`);
  await entry.click('[data-entry-form] button');
  // The panel clears the last result on submit, so this waits for this car's answer.
  await entry.locator('[data-result]:not([hidden]) h2').waitFor();
}

test('display boards update live as a car enters at the entry panel and leaves at the exit panel', {
  skip,
}, async () => {
  const errors: string[] = [];
  const open = async (path: string) => {
    const page = await suite.browser.newPage({ viewport: { width: 1100, height: 800 } });
    page.on('pageerror', (error) => errors.push(`${path}: ${error.message}`));
    const response = await page.goto(`${suite.server.url}${path}`);
    assert.equal(response?.status(), 200, path);
    return page;
  };

  const boards = await open('/parking/boards');
  await boards.locator('[data-live].on').waitFor();
  assert.equal(await count(boards, 'board-F0', 'COMPACT').textContent(), '2');
  await screenshot(boards, 'parking-boards-empty');

  // Entry panel: plate + type → a ticket with its spot.
  const entry = await open('/parking/entry?panel=in-1');
  await enterAt(entry, 'hh-ab 123', 'CAR');
  assert.equal(await entry.locator('[data-result] h2').textContent(), 'Your ticket — the gate opens');
  const ticketCode = (await entry.locator('[data-ticket-code]').textContent())?.trim() ?? '';
  assert.match(ticketCode, /^[2-9A-HJ-NP-Y]{4}-[2-9A-HJ-NP-Y]{4}$/);
  assert.match((await entry.locator('[data-spot-id]').textContent()) ?? '', /^F0-C01 \(COMPACT\)$/);
  await screenshot(entry, 'parking-entry-ticket');

  // The board, never reloaded, shows one compact spot fewer.
  await count(boards, 'board-F0', 'COMPACT')
    .filter({ hasText: /^1$/ })
    .waitFor({ state: 'attached', timeout: 10_000 });
  await screenshot(boards, 'parking-boards-after-entry');

  // Two buses take both large spots; a third finds the lot full and gets no ticket.
  await enterAt(entry, 'BUS 1', 'BUS');
  await enterAt(entry, 'BUS 2', 'BUS');
  await enterAt(entry, 'BUS 3', 'BUS');
  assert.equal(await entry.locator('[data-result] h2').textContent(), 'Lot full');
  assert.equal(await entry.locator('[data-ticket-code]').count(), 0);
  await screenshot(entry, 'parking-entry-lot-full');
  await count(boards, 'board-F1', 'LARGE')
    .filter({ hasText: 'FULL' })
    .waitFor({ state: 'attached', timeout: 10_000 });
  // Boards speak of vehicles: no bus fits anywhere now, so buses are FULL on both floors.
  await boards
    .locator('[data-board="board-F1"] [data-vehicle="BUS"].full [data-free]')
    .filter({ hasText: 'FULL' })
    .waitFor({ timeout: 10_000 });

  // Exit panel: ticket → amount → a declined card keeps the gate closed → a good card opens it.
  const exit = await open('/parking/exit?panel=out-1');
  await exit.fill('#ticket', ticketCode);
  await exit.click('[data-ticket-form] button');
  await exit.locator('[data-due]:not([hidden])').waitFor();
  assert.equal(await exit.locator('[data-amount]').textContent(), '2.00');
  assert.equal(await exit.locator('[data-currency]').textContent(), 'USD');
  assert.match((await exit.locator('[data-duration]').textContent()) ?? '', /^0h \dm$/);
  await screenshot(exit, 'parking-exit-amount');

  await fillCard(exit, TEST_CARDS.declined);
  await exit.click('[data-pay-form] button');
  await exit.locator('[data-result].bad h2').waitFor();
  assert.equal(
    await exit.locator('[data-result] h2').textContent(),
    'Payment failed — the gate stays closed',
  );
  assert.equal(await exit.locator('[data-gate]').isHidden(), true);
  assert.equal(await count(boards, 'board-F0', 'COMPACT').textContent(), '1', 'the car is still inside');
  await screenshot(exit, 'parking-exit-declined');

  await fillCard(exit, '4242 4242 4242 4242');
  await exit.click('[data-pay-form] button');
  await exit.locator('[data-gate]:not([hidden])').waitFor();
  assert.equal(await exit.locator('[data-result] h2').textContent(), 'Paid — the gate opens');
  await screenshot(exit, 'parking-exit-gate-open');

  await count(boards, 'board-F0', 'COMPACT')
    .filter({ hasText: /^2$/ })
    .waitFor({ state: 'attached', timeout: 10_000 });
  await screenshot(boards, 'parking-boards-after-exit');

  // A lost ticket, by plate (the demo operator's session has the attendant's scope), paid here.
  await exit.fill('#lost-plate', 'BUS 2');
  await exit.click('[data-lost-form] button');
  await exit.locator('[data-due]:not([hidden])').waitFor();
  assert.equal(await exit.locator('[data-amount]').textContent(), '50.00');
  assert.match((await exit.locator('[data-plate]').textContent()) ?? '', /BUS2 · lost ticket/);
  await screenshot(exit, 'parking-exit-lost-ticket');
  await fillCard(exit, '4242 4242 4242 4242');
  await exit.click('[data-pay-form] button');
  await exit.locator('[data-gate]:not([hidden])').waitFor();
  await count(boards, 'board-F1', 'LARGE')
    .filter({ hasText: /^1$/ })
    .waitFor({ state: 'attached', timeout: 10_000 });

  const landing = await open('/parking');
  await screenshot(landing, 'parking-landing');
  assert.deepEqual(errors, []);
});
