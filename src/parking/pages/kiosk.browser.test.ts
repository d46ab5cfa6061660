import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import {
  assertFitsAndAccessible,
  browserSuite,
  fillCard,
  screenshot,
} from '../../../test/support/browser.ts';
import { lotJson, writeLot } from '../../../test/support/parking.ts';
import { TEST_CARDS } from '../../payments/api.ts';

/**
 * The panels as a kiosk serves driver after driver, at a desktop and a phone size: the short
 * code and QR on the entry ticket, exit by that code, a typo told in words, the payment QR, the
 * exit panel clearing itself (after the gate opened, and when left untouched), an already-paid
 * ticket, the entry form never offering a bus an accessible spot, and boards by vehicle with FULL.
 */
const suite = browserSuite(() => {
  const lot = lotJson({
    name: 'Kiosk Street Car Park',
    floors: [
      { floor: 0, name: 'Ground floor', spots: { COMPACT: 2, LARGE: 1, HANDICAPPED: 1 } },
      { floor: 1, name: 'Level 1', spots: { MOTORCYCLE: 1 } },
    ],
  });
  return {
    SERVICES: 'parking',
    PARKING_LOT_CONFIG: writeLot(lot),
    // Short enough for a test, long enough for a slow shared machine to act between resets.
    PARKING_PANEL_DONE_RESET: '6s',
    PARKING_PANEL_IDLE_RESET: '25s',
  };
});
const { skip } = suite;
const OPERATOR = { 'x-operator-key': 'dev-operator-key' };
const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];

async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${suite.server.url}${path}`, {
    method,
    headers: { ...OPERATOR, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, body: await response.json() };
}

async function leave(ticketId: string) {
  const paid = await api(
    'POST',
    '/api/v1/parking/exit',
    { ticketId, payment: { card_number: TEST_CARDS.success, exp_month: 12, exp_year: 2030, cvc: '123' } },
    { 'idempotency-key': crypto.randomUUID() },
  );
  assert.equal(paid.body.ticketStatus, 'PAID', JSON.stringify(paid.body));
}

async function open(viewport: (typeof VIEWPORTS)[number], path: string, errors: string[]) {
  // The viewer's clock is Tokyo's: the pages must show the lot's (New York) time anyway.
  const context = await suite.browser.newContext({
    viewport: { width: viewport.width, height: viewport.height },
    timezoneId: 'Asia/Tokyo',
  });
  const page = await context.newPage();
  page.on('pageerror', (error) => errors.push(`${path}: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 40[49]/.test(message.text())) {
      errors.push(`${path}: ${message.text()}`);
    }
  });
  const response = await page.goto(`${suite.server.url}${path}`);
  assert.equal(response?.status(), 200, path);
  return page;
}

/** The receipt page: its content, axe, and one printed page (Chromium's print media and PDF). */
async function printedReceipt(
  viewport: (typeof VIEWPORTS)[number],
  path: string,
  code: string,
  errors: string[],
) {
  assert.match(path, /^\/parking\/receipts\/[0-9a-f-]{36}$/);
  const page = await open(viewport, path, errors);
  const text = (await page.locator('[data-receipt]').textContent()) ?? '';
  for (const expected of [code, 'Entry', 'Exit', '2.00 USD', 'Hourly rate for a car']) {
    assert.ok(text.includes(expected), expected);
  }
  assert.match(
    (await page.locator('[data-entry]').textContent()) ?? '',
    /^\w{3} \d{1,2}, \d{4}, \d{1,2}:\d{2} [AP]M E[SD]T$/,
  );
  assert.match((await page.locator('[data-duration]').textContent()) ?? '', /^\d+h \d+m$/);
  await assertFitsAndAccessible(page, `receipt (${viewport.name})`);
  await screenshot(page, `parking-kiosk-receipt-${viewport.name}`);
  await page.emulateMedia({ media: 'print' });
  assert.equal(await page.locator('header.site').isHidden(), true, 'no site navigation on paper');
  assert.equal(await page.locator('[data-print]').isHidden(), true);
  await screenshot(page, `parking-kiosk-receipt-print-${viewport.name}`);
  for (const format of ['A4', 'Letter']) {
    const pdf = (await page.pdf({ format })).toString('latin1');
    const pages = pdf.match(/\/Type\s*\/Page(?!s)/g) ?? [];
    assert.equal(pages.length, 1, `the receipt prints on one ${format} page`);
  }
  await page.context().close();
}

const imageLoaded = (page: Page, selector: string) =>
  page.locator(selector).evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth > 0);

for (const viewport of VIEWPORTS) {
  const size = viewport.name;

  test(`${size}: entry ticket with code and QR; exit by code; a typo in words; pay; the panel resets`, {
    skip,
  }, async () => {
    const errors: string[] = [];
    const entry = await open(viewport, '/parking/entry?panel=in-1', errors);

    // A bus fits large spots only: the form does not let it ask for an accessible one.
    await entry.check('input[name="vehicleType"][value="BUS"]');
    assert.equal(await entry.locator('input[name="needs"][value="HANDICAPPED"]').isDisabled(), true);
    assert.match(
      (await entry.locator('[data-needs-hint]').textContent()) ?? '',
      /A bus cannot use accessible spots here/,
    );
    // The lot has no charging spots: the form does not offer them at all.
    assert.equal(await entry.locator('input[name="needs"][value="ELECTRIC"]').count(), 0);
    await screenshot(entry, `parking-kiosk-entry-bus-${size}`);
    await entry.check('input[name="vehicleType"][value="CAR"]');
    assert.equal(await entry.locator('input[name="needs"][value="HANDICAPPED"]').isDisabled(), false);

    await entry.fill('#plate', `K ${size}`);
    await entry.click('[data-entry-form] button');
    await entry.locator('[data-result]:not([hidden]) [data-ticket-code]').waitFor();
    const code = (await entry.locator('[data-ticket-code]').textContent())?.trim() ?? '';
    assert.match(code, /^[2-9A-HJ-NP-Y]{4}-[2-9A-HJ-NP-Y]{4}$/);
    await entry.locator('.ticket-qr img').waitFor();
    await entry.waitForFunction(() => {
      const image = document.querySelector<HTMLImageElement>('.ticket-qr img');
      return image?.complete && image.naturalWidth > 0;
    });
    assert.match((await entry.locator('[data-result]').textContent()) ?? '', /Entered .* \(EST\)/);
    await assertFitsAndAccessible(entry, `entry ticket (${size})`);
    await screenshot(entry, `parking-kiosk-entry-ticket-${size}`);

    const exit = await open(viewport, '/parking/exit?panel=out-1', errors);
    // A typo (the last character changed): the driver is told in words what to do.
    const typo = code.slice(0, -1) + (code.endsWith('2') ? '3' : '2');
    await exit.fill('#ticket', typo);
    await exit.click('[data-ticket-form] button');
    await exit.locator('[data-result].bad h2').waitFor();
    assert.equal(await exit.locator('[data-result] h2').textContent(), 'Ticket not found');
    const message = (await exit.locator('[data-result]').textContent()) ?? '';
    assert.match(message, new RegExp(`No ticket with code ${typo}, check the code on the ticket`));
    assert.doesNotMatch(message, /uuid|format|body\./i);
    await screenshot(exit, `parking-kiosk-exit-typo-${size}`);

    // The code as a driver types it: lower case, no dash.
    await exit.fill('#ticket', code.replace('-', '').toLowerCase());
    await exit.click('[data-ticket-form] button');
    await exit.locator('[data-due]:not([hidden])').waitFor();
    assert.equal(await exit.locator('[data-amount]').textContent(), '2.00');
    // Pay on a phone: a QR of the payment page, made on the server.
    await exit.waitForFunction(() => {
      const image = document.querySelector<HTMLImageElement>('[data-payment-qr]');
      return image?.complete && image.naturalWidth > 0;
    });
    assert.ok(await imageLoaded(exit, '[data-payment-qr]'));
    await assertFitsAndAccessible(exit, `exit amount (${size})`);
    await screenshot(exit, `parking-kiosk-exit-amount-${size}`);

    await fillCard(exit, '4242 4242 4242 4242');
    await exit.click('[data-pay-form] button');
    await exit.locator('[data-gate]:not([hidden])').waitFor();
    assert.equal(await exit.locator('[data-result] h2').textContent(), 'Paid — the gate opens');
    await screenshot(exit, `parking-kiosk-exit-gate-open-${size}`);
    const receiptPath = (await exit.locator('[data-receipt-link]').getAttribute('href')) ?? '';
    await printedReceipt(viewport, receiptPath, code, errors);

    // The next driver finds a clean panel: no ticket, no amount, no card number, no "Gate open".
    await exit.locator('[data-exit][data-state="ready"]').waitFor({ state: 'attached', timeout: 15_000 });
    assert.equal(await exit.locator('[data-gate]').isHidden(), true);
    assert.equal(await exit.locator('[data-result]').isHidden(), true);
    assert.equal(await exit.locator('[data-due]').isHidden(), true);
    assert.equal(await exit.inputValue('#ticket'), '');
    assert.equal(await exit.inputValue('#card'), '');
    await screenshot(exit, `parking-kiosk-exit-reset-${size}`);

    // The same ticket again: already paid, with the time the gate opened (lot's clock), no gate.
    await exit.fill('#ticket', code);
    await exit.click('[data-ticket-form] button');
    await exit.locator('[data-result]:not([hidden]) h2').waitFor();
    assert.match(
      (await exit.locator('[data-result] h2').textContent()) ?? '',
      /^Already paid — gate opened at .+ \(EST\)$/,
    );
    assert.equal(await exit.locator('[data-gate]').isHidden(), true);
    await assertFitsAndAccessible(exit, `exit already paid (${size})`);
    await screenshot(exit, `parking-kiosk-exit-already-paid-${size}`);
    await exit.locator('[data-exit][data-state="ready"]').waitFor({ state: 'attached', timeout: 15_000 });

    // A driver who walks away with the amount on screen: the panel clears itself when untouched.
    const other = await api('POST', '/api/v1/parking/entry', {
      licensePlate: `I ${size}`,
      vehicleType: 'CAR',
    });
    assert.equal(other.status, 201);
    await exit.fill('#ticket', other.body.code);
    await exit.click('[data-ticket-form] button');
    await exit.locator('[data-due]:not([hidden])').waitFor();
    await fillCard(exit, '4000 0000');
    const shown = Date.now();
    await exit.locator('[data-exit][data-state="ready"]').waitFor({ state: 'attached', timeout: 60_000 });
    assert.ok(Date.now() - shown >= 20_000, 'not before the idle time');
    assert.equal(await exit.locator('[data-due]').isHidden(), true);
    assert.equal(await exit.inputValue('#card'), '');
    await leave(other.body.ticketId);

    assert.deepEqual(errors, []);
    await exit.context().close();
    await entry.context().close();
  });

  test(`${size}: boards by vehicle type, FULL, and the time on the lot's clock`, { skip }, async () => {
    const errors: string[] = [];
    const boards = await open(viewport, '/parking/boards', errors);
    await boards.locator('[data-live].on').waitFor();
    const vehicle = (board: string, type: string) =>
      boards.locator(`[data-board="${board}"] [data-vehicle="${type}"] [data-free]`);
    assert.equal(await vehicle('board-F0', 'CAR').textContent(), '4');
    assert.equal(await vehicle('board-F0', 'BUS').textContent(), '1');
    assert.equal(await boards.locator('[data-board="board-F1"] [data-vehicle="BUS"]').count(), 0);
    assert.match(
      (await boards.locator('[data-updated]').textContent()) ?? '',
      /^\d{1,2}:\d{2}:\d{2} [AP]M E[SD]T$/,
    );

    // A bus takes the one large spot; three cars take the rest of the ground floor.
    const parked = [
      await api('POST', '/api/v1/parking/entry', { licensePlate: `BUS${size}`, vehicleType: 'BUS' }),
    ];
    await vehicle('board-F0', 'BUS').filter({ hasText: 'FULL' }).waitFor({ timeout: 10_000 });
    assert.equal(await boards.locator('[data-total-vehicle="BUS"] [data-free]').textContent(), 'FULL');
    for (const n of [1, 2, 3]) {
      parked.push(
        await api('POST', '/api/v1/parking/entry', { licensePlate: `F${n}${size}`, vehicleType: 'CAR' }),
      );
    }
    for (const ticket of parked) assert.equal(ticket.status, 201, JSON.stringify(ticket.body));
    await boards
      .locator('[data-board="board-F0"] [data-board-full]:not([hidden])')
      .waitFor({ timeout: 10_000 });
    assert.equal(await vehicle('board-F0', 'CAR').textContent(), 'FULL');
    assert.equal(await vehicle('board-F0', 'MOTORCYCLE').textContent(), 'FULL');
    assert.equal(await vehicle('board-F1', 'MOTORCYCLE').textContent(), '1');
    // A car fits nowhere else in this lot (floor 1 is motorcycles only): the whole lot is FULL for cars.
    assert.equal(await boards.locator('[data-total-vehicle="CAR"] [data-free]').textContent(), 'FULL');
    assert.match((await boards.locator('[data-updated]').textContent()) ?? '', /E[SD]T$/);
    await assertFitsAndAccessible(boards, `boards full (${size})`);
    await screenshot(boards, `parking-kiosk-boards-full-${size}`);

    for (const ticket of parked) await leave(ticket.body.ticketId);
    await vehicle('board-F0', 'CAR').filter({ hasText: '4' }).waitFor({ timeout: 10_000 });
    assert.equal(await boards.locator('[data-board="board-F0"] [data-board-full]').isHidden(), true);
    assert.deepEqual(errors, []);
    await boards.context().close();
  });
}
