import { sql } from 'kysely';
import type { Clock } from '../platform/clock.ts';
import type { Db } from '../platform/db/index.ts';
import { uuidv7 } from '../platform/ids.ts';
import { signWebhook } from '../platform/webhook-signature.ts';
import type { ValidCard } from './card.ts';
import {
  type Charge,
  type ChargeRequest,
  GatewayError,
  GatewayTimeout,
  type PaymentGateway,
  type RefundRequest,
  type WebhookEvent,
} from './gateway.ts';
import type { ChargeRow, PaymentsTables } from './tables.ts';

/**
 * The built-in sandbox gateway. It keeps its own books (tables `payments_sandbox_*`, which a real
 * gateway keeps on its side), decides by test card number like Stripe's test mode, and confirms
 * every settled charge with a signed webhook sent asynchronously through `transport`: the same
 * verification function the HTTP endpoint uses, so the signature, timestamp and dedup checks
 * run on every delivery. Failed deliveries are retried a few times like a real gateway does.
 */
const OUTCOMES: Record<
  string,
  { status: 'succeeded' } | { status: 'failed'; code: string; message: string } | 'hang'
> = {
  '4242424242424242': { status: 'succeeded' },
  '5555555555554444': { status: 'succeeded' },
  '378282246310005': { status: 'succeeded' },
  '4000000000000002': { status: 'failed', code: 'card_declined', message: 'The card was declined' },
  '4000000000009995': {
    status: 'failed',
    code: 'insufficient_funds',
    message: 'The card has insufficient funds',
  },
  '4000000000000119': 'hang',
};
const NOT_A_TEST_CARD = {
  status: 'failed',
  code: 'card_declined',
  message: 'The sandbox accepts test cards only (4242 4242 4242 4242 succeeds)',
} as const;

const PENDING_EXPIRY_MS = 24 * 3600_000;

/** Delivers a signed webhook; resolves with the HTTP-like status the receiver answered. */
export type WebhookTransport = (rawBody: string, headers: Record<string, string>) => Promise<number>;

export interface SandboxGateway extends PaymentGateway {
  /** Settles a pending charge and resolves once its webhook was delivered (or gave up). */
  settle(idempotencyKey: string, outcome: 'succeeded' | 'failed'): Promise<Charge | undefined>;
  /** Waits for webhook deliveries in flight (shutdown, tests). */
  drain(): Promise<void>;
}

export function createSandboxGateway(options: {
  db: Db;
  clock: Clock;
  secret: string;
  transport: WebhookTransport;
  retryDelaysMs?: number[];
  onDeliveryError?: (error: unknown, event: WebhookEvent) => void;
}): SandboxGateway {
  const db = options.db.withTables<PaymentsTables>();
  const { clock } = options;
  const retryDelaysMs = options.retryDelaysMs ?? [200, 1000, 5000];
  const inFlight = new Set<Promise<void>>();
  let closing = false;

  const toCharge = (row: Omit<ChargeRow, 'refunded_minor' | 'created_at' | 'updated_at'>): Charge => ({
    id: row.id,
    idempotencyKey: row.idempotency_key,
    paymentId: row.payment_id,
    status: row.status,
    amountMinor: Number(row.amount_minor),
    currency: row.currency,
    last4: row.last4,
    brand: row.brand,
    failureCode: row.failure_code,
    failureMessage: row.failure_message,
  });

  async function findCharge(idempotencyKey: string): Promise<Charge | undefined> {
    // Like a card authorization, a charge nobody settles expires at the gateway (after a day),
    // so a "never answers" charge does not stay outstanding forever.
    await db
      .updateTable('payments_sandbox_charges')
      .set({ status: 'failed', failure_code: 'charge_expired', failure_message: 'The bank never answered' })
      .where('idempotency_key', '=', idempotencyKey)
      .where('status', '=', 'pending')
      .where('created_at', '<=', new Date(clock.now().getTime() - PENDING_EXPIRY_MS))
      .execute();
    const row = await db
      .selectFrom('payments_sandbox_charges')
      .selectAll()
      .where('idempotency_key', '=', idempotencyKey)
      .executeTakeFirst();
    return row && toCharge(row);
  }

  async function deliver(charge: Charge): Promise<void> {
    const event: WebhookEvent = {
      id: `evt_${uuidv7()}`,
      type: charge.status === 'succeeded' ? 'charge.succeeded' : 'charge.failed',
      created: clock.now().toISOString(),
      data: { charge },
    };
    const body = JSON.stringify(event);
    for (let attempt = 0; ; attempt++) {
      try {
        // Signed at each delivery, as real gateways do, so a retry is never stale.
        const status = await options.transport(
          body,
          signWebhook(options.secret, event.id, clock.now(), body),
        );
        if (status < 300) return;
        throw new Error(`webhook answered ${status}`);
      } catch (error) {
        if (closing || attempt >= retryDelaysMs.length) {
          options.onDeliveryError?.(error, event);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, retryDelaysMs[attempt]).unref());
      }
    }
  }

  function deliverLater(charge: Charge): Promise<void> {
    const task: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => deliver(charge))
      .finally(() => inFlight.delete(task));
    inFlight.add(task);
    return task;
  }

  function outcomeFor(card: ValidCard) {
    return OUTCOMES[card.number] ?? NOT_A_TEST_CARD;
  }

  return {
    name: 'sandbox',

    async createCharge(request: ChargeRequest): Promise<Charge> {
      const existing = await findCharge(request.idempotencyKey);
      if (existing) return existing;
      const outcome = outcomeFor(request.card);
      const now = clock.now();
      const row = {
        id: `ch_${uuidv7().replaceAll('-', '')}`,
        idempotency_key: request.idempotencyKey,
        payment_id: request.paymentId,
        status: outcome === 'hang' ? ('pending' as const) : outcome.status,
        amount_minor: request.amountMinor,
        currency: request.currency,
        last4: request.card.last4,
        brand: request.card.brand,
        failure_code: outcome !== 'hang' && outcome.status === 'failed' ? outcome.code : null,
        failure_message: outcome !== 'hang' && outcome.status === 'failed' ? outcome.message : null,
        refunded_minor: 0,
        created_at: now,
        updated_at: now,
      };
      await db.insertInto('payments_sandbox_charges').values(row).execute();
      const charge = toCharge({ ...row, amount_minor: BigInt(row.amount_minor) });
      if (outcome === 'hang') {
        // The charge exists at the gateway but the answer never comes: the caller's timeout runs.
        await new Promise((_resolve, reject) => {
          const fail = () => reject(new GatewayTimeout('the gateway did not answer in time'));
          if (request.signal.aborted) fail();
          request.signal.addEventListener('abort', fail, { once: true });
        });
      }
      void deliverLater(charge);
      return charge;
    },

    findCharge,

    async refund(request: RefundRequest) {
      const id = `re_${uuidv7().replaceAll('-', '')}`;
      const now = clock.now();
      const amount = request.amountMinor;
      return db.transaction().execute(async (trx) => {
        const inserted = await trx
          .insertInto('payments_sandbox_refunds')
          .values({
            id,
            idempotency_key: request.idempotencyKey,
            charge_id: request.chargeId,
            amount_minor: amount,
            created_at: now,
          })
          .onConflict((oc) => oc.column('idempotency_key').doNothing())
          .executeTakeFirst();
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) {
          const existing = await trx
            .selectFrom('payments_sandbox_refunds')
            .selectAll()
            .where('idempotency_key', '=', request.idempotencyKey)
            .executeTakeFirstOrThrow();
          return {
            id: existing.id,
            chargeId: existing.charge_id,
            amountMinor: Number(existing.amount_minor),
          };
        }
        const updated = await trx
          .updateTable('payments_sandbox_charges')
          .set({ refunded_minor: sql<number>`refunded_minor + ${amount}`, updated_at: now })
          .where('id', '=', request.chargeId)
          .where('status', '=', 'succeeded')
          .where(sql<boolean>`refunded_minor + ${amount} <= amount_minor`)
          .executeTakeFirst();
        if (Number(updated.numUpdatedRows) === 0) {
          throw new GatewayError(`charge ${request.chargeId} cannot be refunded by ${request.amountMinor}`);
        }
        return { id, chargeId: request.chargeId, amountMinor: request.amountMinor };
      });
    },

    async settle(idempotencyKey, outcome) {
      const settled = await db
        .updateTable('payments_sandbox_charges')
        .set({
          status: outcome,
          failure_code: outcome === 'failed' ? 'card_declined' : null,
          failure_message: outcome === 'failed' ? 'The card was declined' : null,
          updated_at: clock.now(),
        })
        .where('idempotency_key', '=', idempotencyKey)
        .where('status', '=', 'pending')
        .returningAll()
        .executeTakeFirst();
      if (!settled) return undefined;
      const charge = toCharge(settled);
      await deliverLater(charge);
      return charge;
    },

    async drain() {
      closing = true;
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
}
