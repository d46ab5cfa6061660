import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import {
  type AxeViolation,
  assertFits,
  axeViolations,
  browserSuite,
  screenshot,
} from '../test/support/browser.ts';
import { seal } from '../test/support/envelope.ts';

/**
 * Every page of the four services (and payments, sign-in, the HTML error page) in Chromium at a
 * desktop and a phone viewport, on the demo data of `npm start`: no serious or critical axe-core
 * violation, no console error, and every same-origin link answers below 400.
 */
const suite = // One admission at a time, so the waiting room keeps this browser in line.
  browserSuite({ BOOKING_QUEUE_CAPACITY: '1' });
const { skip } = suite;

const SERVICE = { 'x-api-key': 'dev-service-key' };
const OPERATOR = { 'x-operator-key': 'dev-operator-key' };
const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];

async function api<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${suite.server.url}${path}`, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

interface Fixtures {
  guest: { user_id: string; token: string };
  movieId: string;
  showId: string;
  hotShowId: string;
  reclinerShowId: string;
  imaxShowId: string;
  bookingId: string;
  paste: string;
  lockedPaste: string;
  /** An end-to-end encrypted paste's id and #key. */
  encryptedPaste: string;
  notificationId: string;
  notifyUser: string;
  paymentPath: string;
  receiptTicket: string;
}
let fixtures: Fixtures;
let made: Promise<Fixtures> | undefined;

/** The data the pages show, made through the APIs once (the first test to need it). */
async function makeFixtures(): Promise<Fixtures> {
  let feedItemToRead = '';
  const guest = await api<{ user_id: string; token: string }>('POST', '/api/v1/guests', {});
  const auth = { authorization: `Bearer ${guest.token}` };
  const listing = await api<{ items: { movie_id: string }[] }>('GET', '/api/v1/movies?city=Mumbai');
  let showId: string | undefined;
  let hotShowId: string | undefined;
  let reclinerShowId: string | undefined;
  let imaxShowId: string | undefined;
  let movieId = '';
  for (const movie of listing.items) {
    const shows = await api<{
      theaters: { shows: { show_id: string; is_hot: boolean; screen_type: string }[] }[];
    }>('GET', `/api/v1/movies/${movie.movie_id}/shows?city=Mumbai`);
    for (const theater of shows.theaters) {
      hotShowId ??= theater.shows.find((show) => show.is_hot)?.show_id;
      reclinerShowId ??= theater.shows.find((show) => /recliner/i.test(show.screen_type))?.show_id;
      imaxShowId ??= theater.shows.find((show) => show.screen_type === 'IMAX' && !show.is_hot)?.show_id;
      if (!showId) {
        showId = theater.shows.find((show) => !show.is_hot)?.show_id;
        movieId = movie.movie_id;
      }
    }
  }
  assert.ok(
    showId && hotShowId && reclinerShowId && imaxShowId,
    'the demo catalogue has a show, a hot show, a recliner screen',
  );
  const held = await api<{ hold_id: string }>(
    'POST',
    `/api/v1/shows/${showId}/hold`,
    { seat_ids: ['A5'] },
    auth,
  );
  const booked = await api<{ booking_id: string }>(
    'POST',
    '/api/v1/bookings',
    {
      hold_id: held.hold_id,
      payment_method: 'CARD',
      payment_details: { card_number: '4242424242424242', exp_month: 12, exp_year: 2030, cvc: '123' },
    },
    { ...auth, 'idempotency-key': randomUUID() },
  );
  // Someone else takes the hot show's only admission, so the waiting room keeps its place in line.
  const other = await api<{ token: string }>('POST', '/api/v1/guests', {});
  await api('GET', `/api/v1/shows/${hotShowId}/queue`, undefined, { authorization: `Bearer ${other.token}` });

  const paste = await api<{ short_url: string }>('POST', '/api/v1/paste', {
    content: 'const answer = 42;\n',
    syntax: 'typescript',
  });
  const locked = await api<{ short_url: string }>('POST', '/api/v1/paste', {
    content: 'secret',
    password: 'correct horse',
  });
  const sealed = seal('const secret = 42;\n');
  const encrypted = await api<{ short_url: string }>('POST', '/api/v1/paste', {
    content: sealed.envelope,
    encryption: 'aes-256-gcm',
  });

  const notifyUser = `pages-${randomUUID().slice(0, 8)}`;
  await api(
    'PATCH',
    `/api/users/${notifyUser}/notification-preferences`,
    { email: 'ana@example.test' },
    SERVICE,
  );
  const sent = await api<{ id: string }>(
    'POST',
    '/api/notifications',
    {
      user_id: notifyUser,
      type: 'booking_confirmed',
      channels: ['email'],
      data: {
        booking_id: 'BK-1',
        movie_title: 'Orbit of Silence',
        theater_name: 'Galaxy Cinemas Andheri',
        show_time: '2026-03-01T19:30:00Z',
        seats: ['C7', 'C8'],
        total_paid: '24.00',
        qr_code: 'v1.eyJiIjoiQkstMSJ9.c2lnbmF0dXJl',
      },
    },
    SERVICE,
  );

  // The guest's in-app feed, which /notify/feed shows (one read, two unread).
  for (const [n, event] of ['password changed', 'new sign-in', 'e-mail changed'].entries()) {
    const item = await api<{ id: string }>(
      'POST',
      '/api/notifications',
      {
        user_id: guest.user_id,
        type: 'security_alert',
        channels: ['in_app'],
        data: { event, occurred_at: `2026-03-0${n + 1}T09:30:00Z` },
      },
      SERVICE,
    );
    if (n === 0) feedItemToRead = item.id;
  }

  const entered = await api<{ ticketId: string }>(
    'POST',
    '/api/v1/parking/entry',
    { licensePlate: 'PAGES1', vehicleType: 'CAR' },
    OPERATOR,
  );
  const exit = await api<{ paymentUrl: string }>(
    'POST',
    '/api/v1/parking/exit',
    { ticketId: entered.ticketId },
    OPERATOR,
  );
  // Stored by a worker: the page must find them there.
  const feed = `/api/users/${guest.user_id}/feed`;
  for (
    let tries = 0;
    (await api<{ items: unknown[] }>('GET', feed, undefined, auth)).items.length < 3;
    tries++
  ) {
    assert.ok(tries < 100, 'the feed items were stored');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await api('PATCH', `${feed}/${feedItemToRead}`, { read: true }, auth);
  // A stay paid at the exit: its receipt page.
  const left = await api<{ ticketId: string }>(
    'POST',
    '/api/v1/parking/entry',
    { licensePlate: 'PAGES2', vehicleType: 'CAR' },
    OPERATOR,
  );
  await api(
    'POST',
    '/api/v1/parking/exit',
    {
      ticketId: left.ticketId,
      payment: { card_number: '4242424242424242', exp_month: 12, exp_year: 2030, cvc: '123' },
    },
    { ...OPERATOR, 'idempotency-key': randomUUID() },
  );
  return {
    guest,
    movieId,
    showId,
    hotShowId,
    reclinerShowId,
    imaxShowId,
    bookingId: booked.booking_id,
    paste: paste.short_url,
    lockedPaste: locked.short_url,
    encryptedPaste: `${encrypted.short_url}#${sealed.key}`,
    notificationId: sent.id,
    notifyUser,
    paymentPath: new URL(exit.paymentUrl).pathname,
    receiptTicket: left.ticketId,
  };
}

/** A page, what it waits for once loaded (its client module's work), and what it may log. */
interface Visit {
  name: string;
  path: () => string;
  ready?: string;
  /** The page's own answer is an error status on purpose (Chromium logs it to the console). */
  status?: number;
}

const VISITS: Visit[] = [
  { name: 'home', path: () => '/' },
  { name: 'paste-form', path: () => '/paste' },
  { name: 'paste-view', path: () => `/${fixtures.paste}`, ready: '#paste-code' },
  { name: 'paste-unlock', path: () => `/${fixtures.lockedPaste}`, status: 401 },
  {
    name: 'paste-encrypted',
    path: () => `/${fixtures.encryptedPaste}`,
    ready: '.paste-encrypted[data-state="decrypted"]',
  },
  { name: 'booking-search', path: () => '/movies' },
  { name: 'booking-movie', path: () => `/movies/${fixtures.movieId}?city=Mumbai` },
  { name: 'booking-seatmap', path: () => `/shows/${fixtures.showId}`, ready: '#seatmap button.seat' },
  { name: 'booking-queue', path: () => `/shows/${fixtures.hotShowId}/queue`, ready: '#position' },
  { name: 'booking-booking', path: () => `/bookings/${fixtures.bookingId}`, ready: 'img#qr' },
  { name: 'booking-mine', path: () => '/my-bookings', ready: '#my-bookings li.card' },
  { name: 'booking-door', path: () => `/door?show=${fixtures.showId}&door=Main`, ready: '#net' },
  { name: 'parking-landing', path: () => '/parking' },
  { name: 'parking-boards', path: () => '/parking/boards', ready: '[data-live].on' },
  { name: 'parking-entry', path: () => '/parking/entry?panel=in-1' },
  { name: 'parking-exit', path: () => '/parking/exit?panel=out-1' },
  { name: 'parking-receipt', path: () => `/parking/receipts/${fixtures.receiptTicket}` },
  {
    name: 'parking-reserve',
    path: () => '/parking/reserve',
    ready: 'body[data-ready] [data-quote]:not(:empty)',
  },
  { name: 'notify-landing', path: () => '/notify' },
  { name: 'notify-inbox', path: () => '/notify/inbox' },
  { name: 'notify-timeline', path: () => `/notify/notifications/${fixtures.notificationId}` },
  { name: 'notify-dead-letters', path: () => '/notify/dead-letters' },
  { name: 'notify-preferences', path: () => `/notify/users/${fixtures.notifyUser}/preferences` },
  { name: 'notify-feed', path: () => '/notify/feed', ready: 'notification-feed li.nf-unread button' },
  { name: 'notify-history', path: () => `/notify/users/${fixtures.notifyUser}/history` },
  { name: 'payments-pay', path: () => fixtures.paymentPath },
  { name: 'sign-in', path: () => '/sign-in' },
  { name: 'not-found', path: () => '/no/such/page/here', status: 404 },
];

function describe(violation: AxeViolation): string {
  const where = violation.targets.slice(0, 3).join(', ');
  const more = violation.targets.length > 3 ? ` and ${violation.targets.length - 3} more` : '';
  return `axe ${violation.impact} ${violation.id} (${violation.help}) at ${where}${more}`;
}

async function check(page: Page, visit: Visit, viewport: string, links: Set<string>): Promise<string[]> {
  const problems: string[] = [];
  const logged: string[] = [];
  const onConsole = (message: { type(): string; text(): string }) => {
    if (message.type() === 'error') logged.push(message.text());
  };
  const onError = (error: Error) => logged.push(error.message);
  page.on('console', onConsole);
  page.on('pageerror', onError);
  const response = await page.goto(`${suite.server.url}${visit.path()}`);
  assert.equal(response?.status(), visit.status ?? 200, `${visit.name} status`);
  if (visit.ready) await page.locator(visit.ready).first().waitFor({ timeout: 15_000 });
  await page.waitForLoadState('networkidle').catch(() => {});
  for (const violation of await axeViolations(page)) {
    problems.push(`${visit.name}@${viewport}: ${describe(violation)}`);
  }
  // Nothing wider than the screen: what does not fit scrolls inside its own box (seat maps, tables).
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  const screenWidth = page.viewportSize()?.width ?? 0;
  if (width > screenWidth)
    problems.push(`${visit.name}@${viewport}: ${width} px wide on a ${screenWidth} px screen`);
  await screenshot(page, `pages-${visit.name}-${viewport}`);
  const origin = new URL(suite.server.url).origin;
  for (const href of await page
    // In-page links (the skip link) are not requests.
    .locator('a[href]:not([href^="#"])')
    .evaluateAll((anchors) => anchors.map((a) => (a as HTMLAnchorElement).href))) {
    const url = new URL(href);
    url.hash = '';
    if (url.origin === origin) links.add(url.href);
  }
  page.off('console', onConsole);
  page.off('pageerror', onError);
  // The error page's own status is logged by Chromium as a failed resource; nothing else may be.
  const expected = visit.status ? `status of ${visit.status}` : undefined;
  for (const text of logged) {
    if (!(expected && text.includes(expected) && text.startsWith('Failed to load resource'))) {
      problems.push(`${visit.name}@${viewport}: console error: ${text}`);
    }
  }
  return problems;
}

for (const viewport of VIEWPORTS) {
  test(`every page at ${viewport.width}×${viewport.height}: no serious axe violation, none wider than the screen, no console error, no broken link`, {
    skip,
  }, async () => {
    made ??= makeFixtures();
    fixtures = await made;
    const context = await suite.browser.newContext({
      viewport: { width: viewport.width, height: viewport.height },
    });
    // The booking pages act as the guest who booked (the pages keep the identity in localStorage).
    await context.addInitScript(
      ({ user, token }) => {
        localStorage.setItem('booking.user_id', user);
        localStorage.setItem('booking.user_token', token);
      },
      { user: fixtures.guest.user_id, token: fixtures.guest.token },
    );
    const page = await context.newPage();
    const links = new Set<string>();
    const problems: string[] = [];
    for (const visit of VISITS) problems.push(...(await check(page, visit, viewport.name, links)));

    // The paste form's answer (a page of its own, after a POST).
    await page.goto(`${suite.server.url}/paste`);
    await page.fill('textarea[name="content"]', 'hello from the pages test');
    await Promise.all([page.waitForURL(/\/paste$/), page.click('form button[type="submit"]')]).catch(
      () => {},
    );
    await page.locator('.paste-url').waitFor();
    for (const violation of await axeViolations(page)) {
      problems.push(
        `paste-created@${viewport.name}: axe ${violation.impact} ${violation.id} at ${violation.targets.join(', ')}`,
      );
    }
    await screenshot(page, `pages-paste-created-${viewport.name}`);

    for (const link of links) {
      const response = await page.request.get(link, { maxRedirects: 5 });
      if (response.status() >= 400) problems.push(`link ${link} answered ${response.status()}`);
    }
    await context.close();
    assert.deepEqual(problems, []);
  });
}

test('the notification console keeps its inputs inside their cards at desktop width', { skip }, async () => {
  const page = await suite.browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${suite.server.url}/notify`);
  const inputs = page.locator('.card input');
  assert.ok((await inputs.count()) >= 2, 'the id lookups are there');
  for (const input of await inputs.all()) {
    const name = await input.getAttribute('name');
    const box = await input.boundingBox();
    const card = await input.evaluate((element) => {
      const rect = (element.closest('.card') as Element).getBoundingClientRect();
      return { left: rect.left, right: rect.right, top: rect.top, bottom: rect.bottom };
    });
    assert.ok(box, `${name} is shown`);
    assert.ok(
      box.x >= card.left && box.x + box.width <= card.right && box.y + box.height <= card.bottom,
      `${name} (${box.x}..${box.x + box.width}) stays inside its card (${card.left}..${card.right})`,
    );
  }
  await page.close();
});

test('on a recliner screen a free seat has the legend\'s "Available" fill; the type is only its shape', {
  skip,
}, async () => {
  made ??= makeFixtures();
  fixtures = await made;
  const page = await suite.browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${suite.server.url}/shows/${fixtures.reclinerShowId}`);
  const free = page.locator('#seatmap button.seat.recliner:not([disabled])').first();
  await free.waitFor();
  // The legend's swatches, found by their words as a user reads them.
  const fill = (words: string) =>
    page
      .locator('.legend li', { hasText: words })
      .locator('.seat')
      .first()
      .evaluate((element) => getComputedStyle(element).backgroundColor);
  const available = await fill('Available');
  const swatches = [available, await fill('Your pick'), await fill('Taken')];
  // Availability is told by the fill: three different colours, none of them the plain card.
  assert.equal(new Set(swatches).size, 3, `the availability swatches differ: ${swatches}`);
  assert.ok(!swatches.includes('rgb(255, 255, 255)'), `no availability is plain white: ${swatches}`);
  assert.equal(await free.evaluate((element) => getComputedStyle(element).backgroundColor), available);
  assert.ok(
    await page.locator('.legend li', { hasText: 'Recliner' }).isVisible(),
    'the legend names the type',
  );
  await free.click();
  assert.equal(await free.evaluate((element) => getComputedStyle(element).backgroundColor), swatches[1]);
  assert.equal(await free.getAttribute('aria-pressed'), 'true');
  await screenshot(page, 'pages-seatmap-recliner');
  await page.close();
});

test('a real-size screen (384 seats, aisles, wheelchair spaces) on a phone: the map scrolls, the page does not', {
  skip,
}, async () => {
  made ??= makeFixtures();
  fixtures = await made;
  const page = await suite.browser.newPage({ viewport: { width: 390, height: 844 }, hasTouch: true });
  await page.goto(`${suite.server.url}/shows/${fixtures.imaxShowId}`);
  await page.locator('#seatmap button.seat').first().waitFor();
  assert.equal(await page.locator('#seatmap button.seat').count(), 384);
  assert.equal(await page.locator('#seatmap button.seat.wheelchair').count(), 4);
  assert.equal(await page.locator('#seatmap button.seat.companion').count(), 2);
  assert.ok(await page.locator('.legend [data-type="WHEELCHAIR"]').isVisible());
  // Aisles: row A's seat 7 sits one column further right than its number.
  const column = (seat: string) =>
    page
      .locator(`#seatmap [data-seat="${seat}"]`)
      .evaluate((element) => (element as HTMLElement).style.gridColumnStart);
  assert.equal(Number(await column('A7')) - Number(await column('A6')), 2);
  const sizes = await page.evaluate(() => {
    const map = document.getElementById('seatmap') as HTMLElement;
    return {
      page: document.documentElement.scrollWidth,
      viewport: innerWidth,
      map: map.scrollWidth,
      mapBox: map.clientWidth,
    };
  });
  assert.ok(sizes.page <= sizes.viewport, `the page does not scroll sideways: ${JSON.stringify(sizes)}`);
  assert.ok(sizes.map > sizes.mapBox, `the seat map scrolls inside itself: ${JSON.stringify(sizes)}`);
  await screenshot(page, 'pages-seatmap-384-phone');
  // The keyboard reaches the far end of a row, and the map scrolls to show it.
  await page.locator('#seatmap button.seat[tabindex="0"]').focus();
  await page.keyboard.press('End');
  const far = page.locator('#seatmap button.seat:focus');
  assert.equal(await far.getAttribute('data-seat'), 'A24');
  const inside = await far.evaluate((element) => {
    const seat = element.getBoundingClientRect();
    const map = (document.getElementById('seatmap') as HTMLElement).getBoundingClientRect();
    return seat.left >= map.left && seat.right <= map.right;
  });
  assert.ok(inside, 'the focused seat is scrolled into view');
  await far.press('Enter');
  assert.equal(await page.textContent('#selected-seats'), 'A24');
  await screenshot(page, 'pages-seatmap-384-phone-end-of-row');
  await page.close();
});

for (const viewport of VIEWPORTS) {
  test(`/docs at ${viewport.width}×${viewport.height}: a way back, Try it out under its CSP, cached assets, axe on what is ours`, {
    skip,
  }, async () => {
    const context = await suite.browser.newContext({
      viewport: { width: viewport.width, height: viewport.height },
    });
    const page = await context.newPage();
    const logged: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') logged.push(message.text());
    });
    page.on('pageerror', (error) => logged.push(error.message));
    await page.goto(`${suite.server.url}/docs`);
    const operation = page.locator('#operations-paste-getPasteLanguages');
    await operation.waitFor({ timeout: 30_000 });

    // The server Swagger UI sends "Try it out" to is the address in use, so the CSP lets it through.
    assert.equal(await page.locator('select#servers').inputValue(), suite.server.url);
    await operation.locator('.opblock-summary-control').click();
    await operation.locator('.try-out__btn').click();
    await operation.locator('button.execute').click();
    const status = operation.locator('.live-responses-table tbody .response-col_status').first();
    await status.waitFor();
    assert.equal((await status.textContent())?.trim(), '200');
    await screenshot(page, `pages-docs-${viewport.name}`);

    // axe: 0 serious/critical on what the page adds or restyles. Swagger UI's own operation rows nest a
    // button in a role="button" (nested-interactive); that is its markup, which a stylesheet cannot change.
    const problems = (await axeViolations(page))
      .map((violation) => ({
        ...violation,
        targets: violation.targets.filter(
          (target) => !(violation.id === 'nested-interactive' && /\.opblock-summary-control$/.test(target)),
        ),
      }))
      .filter((violation) => violation.targets.length > 0)
      .map(describe);
    assert.deepEqual(problems, []);
    await assertFits(page, `docs@${viewport.name}`);
    assert.deepEqual(logged, []);

    // Swagger UI's files are kept by the browser (a week; ETag after that), not fetched on every visit.
    const bundle = await page.request.get(`${suite.server.url}/docs/static/swagger-ui-bundle.js`);
    assert.match(bundle.headers()['cache-control'] ?? '', /max-age=604800/);
    assert.ok(bundle.headers().etag);

    const back = page.getByRole('link', { name: /Back to Four Services/ });
    assert.ok(await back.isVisible());
    await Promise.all([page.waitForURL(`${suite.server.url}/`), back.click()]);
    assert.equal(await page.locator('h1').first().textContent(), 'New paste');
    await context.close();
  });
}

test('every paste page fits a 390 px phone (scrollWidth), and the navigation marks the current part', {
  skip,
}, async () => {
  made ??= makeFixtures();
  fixtures = await made;
  const page = await suite.browser.newPage({ viewport: { width: 390, height: 844 } });
  for (const path of ['/', '/paste', `/${fixtures.paste}`, `/${fixtures.lockedPaste}`]) {
    await page.goto(`${suite.server.url}${path}`);
    await assertFits(page, path);
  }
  assert.equal(
    await page.locator('header.site nav a[aria-current="page"]').textContent(),
    'Text sharing',
    'a paste page is part of Text sharing',
  );
  await page.goto(`${suite.server.url}/parking`);
  assert.equal(await page.locator('header.site nav a[aria-current="page"]').textContent(), 'Parking lot');
  await page.close();
});
