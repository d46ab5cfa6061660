import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { dropNamespace, realServices, uniqueName } from './platform.ts';

/**
 * Browser tests: Debian's Chromium driven by playwright-core against the real app started as
 * a process (`node src/main.ts`). Without Chromium they are skipped with a reason, unless
 * REQUIRE_BROWSER=1 (CI), where a missing browser fails them.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS = 'test-output/screenshots';

export function browserSkipReason(): string | false {
  if (existsSync(CHROMIUM)) return false;
  if (process.env.REQUIRE_BROWSER === '1')
    throw new Error(`REQUIRE_BROWSER=1 but no Chromium at ${CHROMIUM}`);
  return `no Chromium at ${CHROMIUM} (apt-get install chromium)`;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** A card for `fillCard`: the number, and the expiry (MM/YY) and CVC when not the usual ones. */
export interface TestCard {
  number: string;
  exp?: string;
  cvc?: string;
}

/**
 * Types a card into the page's card form (the one platform component of the exit panel, the seat
 * map and the hosted payment page, whatever id its number field has); does not submit it.
 */
export async function fillCard(page: Page, card: string | TestCard): Promise<void> {
  const { number, exp = '12/30', cvc = '123' } = typeof card === 'string' ? { number: card } : card;
  await page.fill('[data-card-field="number"]', number);
  await page.fill('[data-card-field="exp"]', exp);
  await page.fill('[data-card-field="cvc"]', cvc);
}

/** The page is no wider than its viewport: nothing to scroll sideways on a phone. */
export async function assertFits(page: Page, what: string): Promise<void> {
  const sizes = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    viewport: innerWidth,
  }));
  assert.ok(
    sizes.page <= sizes.viewport,
    `${what}: ${sizes.page} px wide in a ${sizes.viewport} px viewport`,
  );
}

/** `assertFits`, and axe finds no serious or critical violation on the page as it is now. */
export async function assertFitsAndAccessible(page: Page, what: string): Promise<void> {
  await assertFits(page, what);
  assert.deepEqual(await axeViolations(page), [], what);
}

/** One axe-core rule broken on a page, with the elements (CSS selectors) that break it. */
export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

let axeSource: string | undefined;

/**
 * Runs axe-core (WCAG 2.0–2.2 A and AA rules and best practices) on the page as it is now and
 * returns the serious and critical violations. axe's source is injected by evaluation, so the
 * pages' Content-Security-Policy (no inline script) does not stop it.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  const loaded = await page.evaluate(() => 'axe' in globalThis);
  if (!loaded) await page.evaluate(axeSource);
  return page.evaluate(async () => {
    // biome-ignore lint/suspicious/noExplicitAny: axe is injected as a global script.
    const axe = (globalThis as any).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return (
      result.violations as {
        id: string;
        impact: string;
        help: string;
        nodes: { target: string[] }[];
      }[]
    )
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map((violation) => ({
        id: violation.id,
        impact: violation.impact,
        help: violation.help,
        targets: violation.nodes.map((node) => node.target.join(' ')),
      }));
  });
}

/**
 * Presses Tab (Shift+Tab with `backwards`) until the focused element matches `selector`, as a
 * keyboard user would, and checks that it shows a focus ring (an outline of 2px or more).
 */
export async function tabTo(page: Page, selector: string, { backwards = false, max = 150 } = {}) {
  for (let presses = 0; presses < max; presses++) {
    await page.keyboard.press(backwards ? 'Shift+Tab' : 'Tab');
    const focused = await page.evaluate((wanted) => {
      const element = document.activeElement;
      if (!element?.matches(wanted)) return undefined;
      const style = getComputedStyle(element);
      return { outline: style.outlineStyle, width: Number.parseFloat(style.outlineWidth) };
    }, selector);
    if (!focused) continue;
    if (focused.outline === 'none' || focused.width < 2) {
      throw new Error(`${selector} has focus but no visible focus ring (${JSON.stringify(focused)})`);
    }
    return;
  }
  throw new Error(`${selector} not reached after ${max} presses of Tab`);
}

/** A TCP port nothing listens on now, for a server a test starts. */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface RunningServer {
  url: string;
  process: ChildProcess;
  /** Its PostgreSQL schema (on the real services), e.g. to count rows or share it with a second server. */
  schema?: string;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `node src/main.ts` on a free port, on the real services when their URLs are set (in a
 * schema of its own on PostgreSQL, dropped at stop), otherwise in a fresh PGlite directory.
 * Several servers share one database and pub/sub (two API processes) when the caller passes the
 * same `DATABASE_SCHEMA` and `NAMESPACE` in `env`; the caller then owns them and drops them with
 * `dropNamespace` (stop() only drops what the server made itself).
 */
export async function startServer(env: Record<string, string> = {}): Promise<RunningServer> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'app-'));
  const url = `http://127.0.0.1:${port}`;
  // Made here (and dropped at stop) unless the caller passes its own.
  const schema = env.DATABASE_SCHEMA === undefined && realServices.databaseUrl ? uniqueName('s') : '';
  const namespace = env.NAMESPACE === undefined ? uniqueName('b') : '';
  const child = spawn(process.execPath, ['src/main.ts'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: url,
      DATA_DIR: dataDir,
      DATABASE_URL: realServices.databaseUrl ?? '',
      DATABASE_SCHEMA: schema,
      REDIS_URL: realServices.redisUrl ?? '',
      NATS_URL: realServices.natsUrl ?? '',
      NAMESPACE: namespace,
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const deadline = Date.now() + 90_000;
  while (true) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${output}`);
    if (Date.now() > deadline) throw new Error(`server did not become ready: ${output}`);
    const ok = await fetch(`${url}/health/ready`).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    process: child,
    schema: env.DATABASE_SCHEMA || schema || undefined,
    output: () => output,
    async stop() {
      // A child killed by a signal has signalCode set and exitCode still null.
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await new Promise((resolve) => child.once('exit', resolve));
      }
      rmSync(dataDir, { recursive: true, force: true });
      if (namespace) await dropNamespace({ ...realServices, namespace }, schema || undefined);
      else if (schema)
        await dropNamespace({ databaseUrl: realServices.databaseUrl, namespace: 'none' }, schema);
    },
  };
}

/** A browser test file's shared app and Chromium, started before its tests and stopped after. */
export interface BrowserSuite {
  /** Why the file's tests are skipped (no Chromium), or false. */
  skip: string | false;
  readonly server: RunningServer;
  readonly browser: Browser;
}

/**
 * Registers the file's `before` (start the app with `env`, then Chromium) and `after` (close both).
 * `env` may be a function, for settings made in `before` (a lot file, a fake carrier's address).
 */
export function browserSuite(
  env: Record<string, string> | (() => Promise<Record<string, string>> | Record<string, string>) = {},
): BrowserSuite {
  const skip = browserSkipReason();
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  before(async () => {
    if (skip) return;
    server = await startServer(typeof env === 'function' ? await env() : env);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });
  return {
    skip,
    get server() {
      if (!server) throw new Error('the server starts in before()');
      return server;
    },
    get browser() {
      if (!browser) throw new Error('the browser starts in before()');
      return browser;
    },
  };
}
