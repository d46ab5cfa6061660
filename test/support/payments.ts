import { sql } from 'kysely';
import type { App } from '../../src/app.ts';
import type { CardDetails, PaymentsApi } from '../../src/payments/api.ts';
import { signWebhook } from '../../src/platform/webhook-signature.ts';
import type { TestApp } from './platform.ts';

/** Helpers for tests of payments and of its owners (booking, parking). */
export function paymentsApi(app: App): PaymentsApi {
  const api = app.platform.modules.get('payments')?.api;
  if (!api) throw new Error('the payments module is not in this app');
  return api as PaymentsApi;
}

export function card(number: string, overrides: Partial<CardDetails> = {}): CardDetails {
  return { card_number: number, exp_month: 12, exp_year: 2030, cvc: '123', ...overrides };
}

/** Every row of every table of the test database as text: for "never stored" assertions. */
export async function dumpDatabase(test: TestApp): Promise<string> {
  const db = test.adapters.database.db;
  const { rows: tables } = await sql<{ table_name: string }>`
    select table_name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db);
  let dump = '';
  for (const { table_name } of tables) {
    const { rows } = await sql<{
      row: string;
    }>`select row_to_json(t)::text as row from ${sql.table(table_name)} t`.execute(db);
    dump += `${table_name}: ${rows.map((r) => r.row).join('\n')}\n`;
  }
  return dump;
}

/** Posts a webhook signed with the app's secret (or another), at a given time. */
export function postWebhook(
  test: TestApp,
  body: unknown,
  options: { secret?: string; at?: Date; id?: string; headers?: Record<string, string> } = {},
) {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const id = options.id ?? (body as { id?: string }).id ?? 'evt_test';
  const headers = signWebhook(
    options.secret ?? test.config.paymentWebhookSecret,
    id,
    options.at ?? test.clock.now(),
    raw,
  );
  return test.app.inject({
    method: 'POST',
    url: '/api/v1/payments/webhook',
    headers: { 'content-type': 'application/json', ...headers, ...options.headers },
    payload: raw,
  });
}
