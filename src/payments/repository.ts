import { type ExpressionBuilder, type Insertable, type Kysely, sql, type Transaction } from 'kysely';
import { compiledOnce } from '../platform/db/compiled-once.ts';
import { createGroup } from '../platform/db/group.ts';
import type { Db } from '../platform/db/index.ts';
import type { PaymentPurpose, PaymentStatus } from './api.ts';
import type { PaymentRow, PaymentsTable, PaymentsTables, RefundRow, RefundsTable } from './tables.ts';

/** SQL of the payments module; the rules live in service.ts. */
export type { PaymentRow, RefundRow } from './tables.ts';

/** A payment as created: PENDING, no attempt yet. */
export type NewPayment = Required<
  Pick<
    Insertable<PaymentsTable>,
    | 'id'
    | 'purpose'
    | 'reference'
    | 'description'
    | 'amount_minor'
    | 'currency'
    | 'allow_retry'
    | 'idempotency_key'
    | 'return_url'
    | 'created_at'
    | 'updated_at'
  >
> & { status: 'PENDING' };

const NEW_PAYMENT_COLUMNS = [
  'id',
  'purpose',
  'reference',
  'description',
  'amount_minor',
  'currency',
  'status',
  'allow_retry',
  'idempotency_key',
  'return_url',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof NewPayment)[];

export type PaymentsDb = Kysely<PaymentsTables>;
type Executor = PaymentsDb | Transaction<PaymentsTables>;

/** PENDING, or FAILED with another try allowed: a payment that can still be paid, or cancelled. */
const stillPayable = (eb: ExpressionBuilder<PaymentsTables, 'payments'>) =>
  eb.or([eb('status', '=', 'PENDING'), eb.and([eb('status', '=', 'FAILED'), eb('allow_retry', '=', true)])]);

/** Card attempts per payment: a hosted page must not become a card-testing oracle. */
export const MAX_ATTEMPTS = 10;

const bump = { version: sql<number>`version + 1` } as const;

/** The columns a payment gets when it fails, however it got there. */
const failedFields = (failure: Failure, now: Date) =>
  ({
    ...bump,
    status: 'FAILED',
    failure_code: failure.code,
    failure_message: failure.message,
    failed_at: now,
    updated_at: now,
    last_event: 'payment.failed',
  }) as const;

export function createPaymentsRepository(database: Db) {
  const db: PaymentsDb = database.withTables<PaymentsTables>();

  /**
   * A batch's rows travel as one JSON parameter that PostgreSQL reads back as payment rows, so the
   * statement is the same whatever the batch size, and is built and compiled once.
   */
  const insertJson = compiledOnce(1, (rows: string) =>
    db
      .insertInto('payments')
      .columns(NEW_PAYMENT_COLUMNS)
      .expression(
        db
          .selectFrom(sql<NewPayment>`jsonb_populate_recordset(null::payments, ${rows}::jsonb)`.as('r'))
          .select(NEW_PAYMENT_COLUMNS),
      )
      .onConflict((oc) =>
        oc.columns(['purpose', 'idempotency_key']).where('idempotency_key', 'is not', null).doNothing(),
      )
      .returningAll(),
  );
  const insertRows = async (rows: NewPayment[]) => (await insertJson(db, JSON.stringify(rows))).rows;

  /**
   * Inserts arriving together go in one statement and one commit (group commit: parking exits
   * create one payment each, and a commit per payment was most of an exit's cost under load —
   * see bench/README.md, parking-entry). A row its idempotency key already took comes back
   * undefined, as alone; a batch never holds one key twice, and a failed batch is retried row by row.
   */
  const insert = createGroup<NewPayment, PaymentRow | undefined>({
    one: async (row) => (await insertRows([row]))[0],
    many: async (rows) => {
      const inserted = new Map((await insertRows(rows)).map((row) => [row.id, row]));
      return rows.map((row) => inserted.get(row.id));
    },
    key: (row) => (row.idempotency_key === null ? row.id : `${row.purpose}:${row.idempotency_key}`),
  });

  return {
    db,

    insert,

    async find(id: string, executor: Executor = db): Promise<PaymentRow | undefined> {
      return executor.selectFrom('payments').selectAll().where('id', '=', id).executeTakeFirst();
    },

    async findForUpdate(trx: Transaction<PaymentsTables>, id: string): Promise<PaymentRow | undefined> {
      return trx.selectFrom('payments').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    },

    async findByIdempotencyKey(purpose: PaymentPurpose, key: string): Promise<PaymentRow | undefined> {
      return db
        .selectFrom('payments')
        .selectAll()
        .where('purpose', '=', purpose)
        .where('idempotency_key', '=', key)
        .executeTakeFirst();
    },

    async listByReference(purpose: PaymentPurpose, reference: string): Promise<PaymentRow[]> {
      return db
        .selectFrom('payments')
        .selectAll()
        .where('purpose', '=', purpose)
        .where('reference', '=', reference)
        .orderBy('id', 'desc')
        .execute();
    },

    /** Takes the payment's single attempt slot; undefined when it is paid, final or busy. */
    async claimAttempt(id: string, attemptId: string, card: { last4: string; brand: string }, now: Date) {
      return db
        .updateTable('payments')
        .set((eb) => ({
          status: 'PENDING',
          attempt_id: attemptId,
          attempt_started_at: now,
          attempts: eb('attempts', '+', 1),
          card_last4: card.last4,
          card_brand: card.brand,
          failure_code: null,
          failure_message: null,
          updated_at: now,
        }))
        .where('id', '=', id)
        .where('attempt_id', 'is', null)
        .where('attempts', '<', MAX_ATTEMPTS)
        .where(stillPayable)
        .returningAll()
        .executeTakeFirst();
    },

    async recordPendingCharge(id: string, attemptId: string, chargeId: string, now: Date): Promise<void> {
      await db
        .updateTable('payments')
        .set({ gateway_charge_id: chargeId, updated_at: now })
        .where('id', '=', id)
        .where('attempt_id', '=', attemptId)
        .execute();
    },

    /** PENDING with this attempt → COMPLETED; undefined when that is no longer the state. */
    async complete(executor: Executor, id: string, attemptId: string, chargeId: string, now: Date) {
      return executor
        .updateTable('payments')
        .set({
          ...bump,
          status: 'COMPLETED',
          attempt_id: null,
          gateway_charge_id: chargeId,
          completed_at: now,
          updated_at: now,
          last_event: 'payment.completed',
        })
        .where('id', '=', id)
        .where('status', '=', 'PENDING')
        .where('attempt_id', '=', attemptId)
        .returningAll()
        .executeTakeFirst();
    },

    /** PENDING with this attempt → FAILED. */
    async fail(executor: Executor, id: string, attemptId: string, failure: Failure, now: Date) {
      return executor
        .updateTable('payments')
        .set({ ...failedFields(failure, now), attempt_id: null })
        .where('id', '=', id)
        .where('status', '=', 'PENDING')
        .where('attempt_id', '=', attemptId)
        .returningAll()
        .executeTakeFirst();
    },

    /**
     * PENDING, or FAILED and open to another card, with no outstanding charge → FAILED
     * (`canceled`) for good: `allow_retry` goes, so `claimAttempt` never takes it again. The same
     * row lock orders it against a claim: whichever commits first wins, the other finds nothing.
     */
    async cancel(id: string, failure: Failure, now: Date) {
      return db
        .updateTable('payments')
        .set({ ...failedFields(failure, now), allow_retry: false })
        .where('id', '=', id)
        .where('attempt_id', 'is', null)
        .where(stillPayable)
        .returningAll()
        .executeTakeFirst();
    },

    /** Forgets an attempt the gateway never saw (the request died before reaching it). */
    async clearAttempt(id: string, attemptId: string, now: Date): Promise<void> {
      await db
        .updateTable('payments')
        .set({ attempt_id: null, updated_at: now })
        .where('id', '=', id)
        .where('attempt_id', '=', attemptId)
        .execute();
    },

    async markNotified(id: string, version: number): Promise<void> {
      await db
        .updateTable('payments')
        .set({ notified_version: version })
        .where('id', '=', id)
        .where('notified_version', '<', version)
        .execute();
    },

    async unnotified(purposes: PaymentPurpose[], before: Date, limit: number): Promise<PaymentRow[]> {
      if (purposes.length === 0) return [];
      return db
        .selectFrom('payments')
        .selectAll()
        .where((eb) => eb('notified_version', '<', eb.ref('version')))
        .where('updated_at', '<=', before)
        .where('purpose', 'in', purposes)
        .orderBy('updated_at')
        .limit(limit)
        .execute();
    },

    async staleAttempts(before: Date, limit: number): Promise<PaymentRow[]> {
      return db
        .selectFrom('payments')
        .selectAll()
        .where('attempt_id', 'is not', null)
        .where('attempt_started_at', '<=', before)
        .orderBy('attempt_started_at')
        .limit(limit)
        .execute();
    },

    async findRefund(
      trx: Transaction<PaymentsTables>,
      paymentId: string,
      key: string,
    ): Promise<RefundRow | undefined> {
      return trx
        .selectFrom('payment_refunds')
        .selectAll()
        .where('payment_id', '=', paymentId)
        .where('idempotency_key', '=', key)
        .where('status', '<>', 'FAILED')
        .executeTakeFirst();
    },

    /** Records a refund as PENDING and reserves its amount, so concurrent refunds cannot exceed the payment. */
    async reserveRefund(trx: Transaction<PaymentsTables>, refund: NewRefund): Promise<void> {
      await trx
        .insertInto('payment_refunds')
        .values({ ...refund, status: 'PENDING' })
        .execute();
      await trx
        .updateTable('payments')
        .set({
          refunded_minor: sql<number>`refunded_minor + ${refund.amount_minor}`,
          updated_at: refund.created_at,
        })
        .where('id', '=', refund.payment_id)
        .execute();
    },

    /** Marks a refund done; the payment becomes REFUNDED once done refunds cover its amount. */
    async finishRefund(
      refund: RefundRow,
      gatewayRefundId: string,
      now: Date,
    ): Promise<PaymentRow | undefined> {
      return db.transaction().execute(async (trx) => {
        const done = await trx
          .updateTable('payment_refunds')
          .set({ status: 'SUCCEEDED', gateway_refund_id: gatewayRefundId, completed_at: now })
          .where('id', '=', refund.id)
          .where('status', '=', 'PENDING')
          .executeTakeFirst();
        if (Number(done.numUpdatedRows) === 0) return undefined;
        return trx
          .updateTable('payments')
          .set({
            ...bump,
            status: sql<PaymentStatus>`case when (select sum(amount_minor) from payment_refunds
              where payment_id = ${refund.payment_id} and status = 'SUCCEEDED') >= amount_minor
              then 'REFUNDED' else status end`,
            refund_reason: refund.reason,
            refunded_at: now,
            updated_at: now,
            last_event: 'payment.refunded',
          })
          .where('id', '=', refund.payment_id)
          .returningAll()
          .executeTakeFirst();
      });
    },

    /** The gateway refused: release the reserved amount so the refund can be tried again. */
    async failRefund(refund: RefundRow, now: Date): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const failed = await trx
          .updateTable('payment_refunds')
          .set({ status: 'FAILED', completed_at: now })
          .where('id', '=', refund.id)
          .where('status', '=', 'PENDING')
          .executeTakeFirst();
        if (Number(failed.numUpdatedRows) === 0) return;
        await trx
          .updateTable('payments')
          .set({
            refunded_minor: sql<number>`refunded_minor - ${Number(refund.amount_minor)}`,
            updated_at: now,
          })
          .where('id', '=', refund.payment_id)
          .execute();
      });
    },

    async pendingRefunds(before: Date, limit: number): Promise<RefundRow[]> {
      return db
        .selectFrom('payment_refunds')
        .selectAll()
        .where('status', '=', 'PENDING')
        .where('created_at', '<=', before)
        .orderBy('created_at')
        .limit(limit)
        .execute();
    },

    /** False when the event id was seen before (a replay or a redelivery). */
    async recordEvent(
      trx: Transaction<PaymentsTables>,
      eventId: string,
      type: string,
      now: Date,
    ): Promise<boolean> {
      const result = await trx
        .insertInto('payment_webhook_events')
        .values({ event_id: eventId, type, received_at: now })
        .onConflict((oc) => oc.column('event_id').doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
    },

    /** Removes up to `limit` event ids received before `before`, the oldest first; returns how many. */
    async removeEvents(before: Date, limit: number): Promise<number> {
      const result = await db
        .deleteFrom('payment_webhook_events')
        .where('event_id', 'in', (eb) =>
          eb
            .selectFrom('payment_webhook_events')
            .select('event_id')
            .where('received_at', '<', before)
            .orderBy('received_at')
            .limit(limit),
        )
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    /** When the oldest event id on record was received (the `received_at` index's first entry). */
    async oldestEvent(): Promise<Date | undefined> {
      const row = await db
        .selectFrom('payment_webhook_events')
        .select('received_at')
        .orderBy('received_at')
        .limit(1)
        .executeTakeFirst();
      return row?.received_at;
    },
  };
}

export interface Failure {
  code: string;
  message: string;
}

export type NewRefund = Omit<
  RefundsTable,
  'status' | 'gateway_refund_id' | 'completed_at' | 'amount_minor'
> & {
  amount_minor: number;
  completed_at: null;
};

export type PaymentsRepository = ReturnType<typeof createPaymentsRepository>;
