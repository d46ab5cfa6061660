import assert from 'node:assert/strict';
import { test } from 'node:test';
import { browserSuite, screenshot } from '../../../test/support/browser.ts';

const suite = browserSuite();
const { skip } = suite;

test('the home page links the four services and the API docs, and every link opens', { skip }, async () => {
  const page = await suite.browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  const response = await page.goto(suite.server.url);
  assert.equal(response?.status(), 200);
  assert.equal(await page.title(), 'Home · Four Services');
  const links = await page
    .locator('main a')
    .evaluateAll((anchors) =>
      anchors.map((a) => ({ text: a.textContent?.trim(), href: a.getAttribute('href') })),
    );
  const hrefs = links.map((link) => link.href);
  for (const href of ['/paste', '/notify', '/movies', '/parking', '/docs']) {
    assert.ok(hrefs.includes(href), `home links ${href}: ${JSON.stringify(links)}`);
  }
  await screenshot(page, 'platform-home');
  for (const href of new Set(hrefs.filter((h): h is string => !!h && h.startsWith('/')))) {
    const opened = await page.goto(`${suite.server.url}${href}`);
    assert.ok(opened && opened.status() < 400, `${href} answered ${opened?.status()}`);
  }
  await page.goto(`${suite.server.url}/docs`);
  // Swagger UI 5 takes seconds to build its model of an OpenAPI 3.1 document this size, more
  // when the CI runs three suites at once on two cores (swagger-api/swagger-ui#10250).
  await page.waitForSelector('.swagger-ui', { timeout: 60_000 });
  await screenshot(page, 'platform-docs');
  assert.deepEqual(errors, []);
});
