import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertFitsAndAccessible, browserSuite, screenshot } from '../../../test/support/browser.ts';
import { lotJson, writeLot } from '../../../test/support/parking.ts';

/**
 * The reservation page at a desktop and a phone size, viewed from Tokyo (the lot is in New York):
 * the form offers only spot types that fit the vehicle, the live quote and availability, an error
 * in words next to its field, a reservation starting soon held on a spot ("My reservations" and
 * the boards say so), and its cancellation.
 */
const suite = browserSuite(() => ({
  SERVICES: 'parking',
  PARKING_LOT_CONFIG: writeLot(
    lotJson({
      name: 'Reserve Street Car Park',
      floors: [{ floor: 0, name: 'Ground floor', code: 'G', spots: { COMPACT: 3, LARGE: 1 } }],
      reservations: { spots: { COMPACT: 3, LARGE: 1 }, holdAheadMinutes: 60, graceMinutes: 30 },
    }),
  ),
}));
const { skip } = suite;
const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];

/** `YYYY-MM-DDTHH:MM` on New York's wall clock, what a datetime-local field of the page holds. */
function newYork(instant: Date): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: 'America/New_York',
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    })
      .formatToParts(instant)
      .map((part) => [part.type, part.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}`;
}

for (const viewport of VIEWPORTS) {
  const size = viewport.name;
  test(`${size}: reserve a spot, see it held, cancel it`, { skip }, async () => {
    const context = await suite.browser.newContext({
      viewport: { width: viewport.width, height: viewport.height },
      timezoneId: 'Asia/Tokyo',
    });
    const errors: string[] = [];
    const page = await context.newPage();
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 4(09|22)/.test(message.text()))
        errors.push(message.text());
    });
    const landing = await page.goto(`${suite.server.url}/parking`);
    assert.equal(landing?.status(), 200);
    await page.click('a[href="/parking/reserve"]');
    await page.locator('body[data-ready]').waitFor();
    const quote = page.locator('[data-quote]');
    await page.waitForFunction(() => (document.querySelector('[data-quote]')?.textContent ?? '') !== '');
    assert.match(
      (await quote.textContent()) ?? '',
      /\d of 3 reservable compact spots left .* Price: 4\.00 USD/,
    );
    assert.match((await page.locator('label[for="startsAt"]').textContent()) ?? '', /America\/New_York/);

    // A bus fits large spots only: the other types are not offered.
    await page.check('input[name="vehicleType"][value="BUS"]');
    assert.equal(await page.locator('#spotType').inputValue(), 'LARGE');
    assert.equal(await page.locator('#spotType option[value="COMPACT"]').isDisabled(), true);
    await page.check('input[name="vehicleType"][value="CAR"]');
    await page.selectOption('#spotType', 'COMPACT');

    // The end before the start: said in words next to the end.
    const soon = new Date(Date.now() + 20 * 60_000);
    await page.fill('#plate', `rs ${size}`);
    await page.fill('#startsAt', newYork(soon));
    await page.fill('#endsAt', newYork(new Date(soon.getTime() - 60 * 60_000)));
    await page.click('[data-reserve-form] button[type="submit"]');
    const endError = page.locator('#endsAt-error');
    await endError.waitFor();
    assert.equal(await endError.textContent(), 'The end must be after the start');
    assert.equal(await page.locator('#endsAt').getAttribute('aria-invalid'), 'true');
    await assertFitsAndAccessible(page, `error (${size})`);
    await screenshot(page, `parking-reserve-error-${size}`);

    // Starting in 20 minutes: a spot is held at once.
    await page.fill('#endsAt', newYork(new Date(soon.getTime() + 2 * 3_600_000)));
    await page.click('[data-reserve-form] button[type="submit"]');
    const item = page.locator('[data-reservation][data-status="HELD"]');
    await item.waitFor();
    assert.equal(await endError.isHidden(), true);
    const text = (await item.textContent()) ?? '';
    assert.match(text, new RegExp(`RS${size.toUpperCase()}`));
    assert.match(text, /Spot held/);
    assert.match(text, /Spot G-C0\d on floor 0 is kept for you until .* E[SD]T/);
    await assertFitsAndAccessible(page, `held (${size})`);
    await screenshot(page, `parking-reserve-held-${size}`);

    // The boards count it.
    const boards = await context.newPage();
    await boards.goto(`${suite.server.url}/parking/boards`);
    assert.equal(await boards.locator('[data-board] [data-reserved]').textContent(), '1 reserved');
    await boards.close();

    await item.locator('button', { hasText: 'Cancel reservation' }).click();
    await page.locator('[data-reservation][data-status="CANCELLED"]').waitFor();
    assert.equal(await page.locator('[data-reservation] button').count(), 0);
    await assertFitsAndAccessible(page, `cancelled (${size})`);
    await screenshot(page, `parking-reserve-cancelled-${size}`);
    assert.deepEqual(errors, []);
    await context.close();
  });
}
