/**
 * Screenshots of three pages on a phone (390×844) as a user meets them: a wide seat map, the
 * exit panel when the next driver walks up after a paid exit, and an SMS open in the dev inbox.
 * Run it against two running apps (say the code before and after a change) to compare them:
 *
 *   node scripts/phone-shots.ts http://127.0.0.1:3000 after docs/before-after
 *
 * The exit panel is shot 7 s after the payment: start the app with PARKING_PANEL_DONE_RESET=3s
 * (where the code has that setting) to see it reset within that time.
 */
import { mkdirSync } from 'node:fs';
import { chromium } from 'playwright-core';

const [base, label, dir = 'test-output/phone-shots'] = process.argv.slice(2);
if (!base || !label) throw new Error('usage: node scripts/phone-shots.ts <base url> <label> [dir]');
mkdirSync(dir, { recursive: true });
const out = (name: string) => `${dir}/${label}-${name}.png`;

interface ShowList {
  theaters: { shows: { show_id: string; screen_type: string; is_hot: boolean }[] }[];
}

async function json<T>(path: string, init?: RequestInit): Promise<T> {
  const response = await fetch(base + path, init);
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu'],
});
const page = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
const pageWidth = () => page.evaluate(() => document.documentElement.scrollWidth);

// A wide seat map: the first IMAX show that is not behind the waiting room.
const movies = await json<{ items: { movie_id: string }[] }>('/api/v1/movies?city=Mumbai');
const shows = await json<ShowList>(`/api/v1/movies/${movies.items[0].movie_id}/shows?city=Mumbai`);
const show = shows.theaters.flatMap((t) => t.shows).find((s) => s.screen_type === 'IMAX' && !s.is_hot);
if (!show) throw new Error('no IMAX show in the demo catalogue');
await page.goto(`${base}/shows/${show.show_id}`);
await page.waitForTimeout(2500);
await page.screenshot({ path: out('seat-map') });
console.log(label, 'seat map page width', await pageWidth());

// The exit panel: a car parked through the API, paid by card at the panel, then the next driver.
const operator = { 'x-operator-key': 'dev-operator-key', 'content-type': 'application/json' };
const ticket = await json<{ ticketId: string; code?: string }>('/api/v1/parking/entry', {
  method: 'POST',
  headers: operator,
  body: JSON.stringify({ licensePlate: `SHOT${Date.now() % 100_000}`, vehicleType: 'CAR' }),
});
await page.goto(`${base}/parking/exit`);
await page.fill('#ticket', ticket.code ?? ticket.ticketId);
await page.click('button:has-text("Show amount")');
await page.waitForSelector('#card', { state: 'visible' });
await page.fill('#card', '4242 4242 4242 4242');
if (await page.$('#exp')) {
  await page.fill('#exp', '12/30');
  await page.fill('#cvc', '123');
}
await page.click('button:has-text("Pay")');
await page.waitForTimeout(7000);
await page.screenshot({ path: out('exit-next-driver') });

// An SMS in the dev inbox.
const service = { 'x-api-key': 'dev-service-key', 'content-type': 'application/json' };
await json('/api/users/shot-user/notification-preferences', {
  method: 'PATCH',
  headers: service,
  body: JSON.stringify({ phone: '+15551234567' }),
});
await json('/api/notifications', {
  method: 'POST',
  headers: service,
  body: JSON.stringify({
    user_id: 'shot-user',
    type: 'booking_confirmed',
    channels: ['sms'],
    data: {
      booking_id: 'BK-1',
      movie_title: 'Orbit of Silence',
      theater_name: 'Galaxy Cinemas Andheri',
      show_time: '2026-03-01T19:30:00Z',
      seats: ['C7', 'C8'],
      total_paid: '24.00',
      qr_code: 'demo',
    },
  }),
});
await page.waitForTimeout(3000);
await page.goto(`${base}/notify/inbox?user=shot-user`);
const message = await page.$('main a[href*="message="]');
if (message) await Promise.all([page.waitForLoadState(), message.click()]);
await page.screenshot({ path: out('inbox'), fullPage: true });
console.log(label, 'inbox page width', await pageWidth());
await browser.close();
