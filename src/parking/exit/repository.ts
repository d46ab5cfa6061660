import { sql } from 'kysely';
import type { PaymentStatus } from '../../payments/api.ts';
import { compiledOnce } from '../../platform/db/compiled-once.ts';
import { createGroup } from '../../platform/db/group.ts';
import type { Db } from '../../platform/db/index.ts';
import { createTicketReads, numbers, PAYMENT_COLUMNS, parkingDb, TICKET_COLUMNS } from '../rows.ts';
import type { PaymentRow, TicketRow } from '../tables.ts';

export interface ExitState {
  ticket: TicketRow;
  /** The latest payment of the ticket (the live one if there is one). */
  current: PaymentRow | undefined;
  /** How many payments the ticket has had, failed ones included. */
  attempts: number;
}

/** A payment to record as its ticket's live one, with the exit that asked for it. */
export interface PaymentLink {
  payment: PaymentRow;
  ticket: { exitTime: Date; exitPanelId: string | null };
}

/** SQL of exits, lost tickets and their payments. */
export function createExitRepository(database: Db) {
  const db = parkingDb(database);
  const { ticket, payment, ticketInside, ticketIdByCode } = createTicketReads(db);

  /**
   * Tickets with their current payment and their payments' count, one row each; built and
   * compiled once (every exit batch runs it: the builder's cost per call showed in profiles).
   */
  const exitStateRows = compiledOnce(1, (ticketIds: string[]) =>
    db
      .selectFrom('parking_tickets')
      .leftJoin('parking_payments as p', 'p.id', 'parking_tickets.current_payment_id')
      .select(TICKET_COLUMNS)
      .select((eb) => [
        eb
          .selectFrom('parking_payments as c')
          .whereRef('c.ticket_id', '=', 'parking_tickets.id')
          .select(sql<number>`count(*)::int`.as('n'))
          .as('attempts'),
        'p.id as p_id',
        'p.kind as p_kind',
        'p.amount_minor as p_amountMinor',
        'p.currency as p_currency',
        'p.status as p_status',
        'p.payment_url as p_paymentUrl',
        'p.failure_reason as p_failureReason',
        'p.duration_ms as p_durationMs',
        'p.created_at as p_createdAt',
        'p.updated_at as p_updatedAt',
        'p.retryable as p_retryable',
      ])
      // One statement text whatever the batch size.
      .where('parking_tickets.id', '=', sql<string>`any(${ticketIds}::uuid[])`),
  );

  async function exitStates(ticketIds: string[]): Promise<(ExitState | undefined)[]> {
    const { rows } = await exitStateRows(db, ticketIds);
    // PostgreSQL reads a uuid in several spellings (case, braces, dashes); match on the digits.
    const digits = (id: string) => id.toLowerCase().replace(/[^0-9a-f]/g, '');
    const states = new Map(rows.map((row) => [digits(row.id), exitStateOf(row)]));
    return ticketIds.map((id) => states.get(digits(id)));
  }

  /**
   * Inserts each payment unless the live-payment index (or its id) refuses it (ON CONFLICT covers
   * every unique index), and links the tickets whose payment went in; in one statement.
   * Returns, per link, whether its payment was recorded.
   */
  async function addPayments(links: PaymentLink[]): Promise<boolean[]> {
    const column = <T>(pick: (link: PaymentLink) => T) => links.map(pick);
    // Raw SQL: a bulk insert from unnest'ed arrays chained (CTEs) to the tickets' update, one statement per batch.
    const { rows } = await sql<{ id: string }>`
      with input as (
        select * from unnest(
          ${column((l) => l.payment.id)}::text[], ${column((l) => l.payment.ticketId)}::uuid[],
          ${column((l) => l.payment.kind)}::text[], ${column((l) => String(l.payment.amountMinor))}::bigint[],
          ${column((l) => l.payment.currency)}::text[], ${column((l) => l.payment.status)}::text[],
          ${column((l) => l.payment.paymentUrl)}::text[], ${column((l) => l.payment.failureReason)}::text[],
          ${column((l) => String(l.payment.durationMs))}::bigint[],
          ${column((l) => l.payment.createdAt.toISOString())}::timestamptz[],
          ${column((l) => l.payment.updatedAt.toISOString())}::timestamptz[],
          ${column((l) => l.ticket.exitTime.toISOString())}::timestamptz[],
          ${column((l) => l.ticket.exitPanelId)}::text[]
        ) as i(id, ticket_id, kind, amount_minor, currency, status, payment_url, failure_reason, duration_ms,
               created_at, updated_at, exit_time, exit_panel_id)
      ), inserted as (
        insert into parking_payments (id, ticket_id, kind, amount_minor, currency, status, payment_url,
          failure_reason, duration_ms, created_at, updated_at)
        select id, ticket_id, kind, amount_minor, currency, status, payment_url, failure_reason, duration_ms,
          created_at, updated_at
        from input
        on conflict do nothing
        returning id
      ), linked as (
        update parking_tickets set exit_time = input.exit_time, exit_panel_id = input.exit_panel_id,
          current_payment_id = input.id
        from input join inserted using (id)
        where parking_tickets.id = input.ticket_id and parking_tickets.status in ('ACTIVE', 'LOST')
      )
      select id from inserted`.execute(db);
    const inserted = new Set(rows.map((row) => row.id));
    return links.map((link) => inserted.has(link.payment.id));
  }

  return {
    ticket,
    payment,
    ticketInside,
    ticketIdByCode,

    async markLost(ticketId: string, at: Date): Promise<boolean> {
      const result = await db
        .updateTable('parking_tickets')
        .set({ status: 'LOST', lost_at: at })
        .where('id', '=', ticketId)
        .where('status', '=', 'ACTIVE')
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async payments(ticketId: string): Promise<PaymentRow[]> {
      const rows = await db
        .selectFrom('parking_payments')
        .select(PAYMENT_COLUMNS)
        .where('ticket_id', '=', ticketId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(numbers);
    },

    /**
     * A ticket, its current (latest) payment and how many payments it has had, in one round trip.
     * Reads arriving together share one query (as the exits' writes share a commit).
     */
    exitState: createGroup<string, ExitState | undefined>({
      one: async (ticketId) => (await exitStates([ticketId]))[0],
      many: exitStates,
    }),

    /**
     * Records a new payment as the ticket's live one. False when another exit got there first
     * (the unique index on live payments, or the same gateway payment already recorded).
     * Exits arriving together are recorded in one statement and one commit (see `addPayments`).
     */
    addPayment: createGroup<PaymentLink, boolean>({
      one: async (link) => (await addPayments([link]))[0],
      many: addPayments,
      // One ticket at most once per batch, so the live-payment index decides between its exits as before.
      key: (link) => link.payment.ticketId,
    }),

    /**
     * A completed payment: ticket PAID and its spot freed, in one transaction. The spot is freed
     * only if it still holds this ticket, so a late duplicate can never evict the next vehicle.
     * Returns the ticket when this call made the change, undefined when it had already happened.
     * Throws a unique violation (parking_payments_live) when the ticket was paid by another payment.
     */
    async completePayment(
      paymentId: string,
      at: Date,
    ): Promise<{ ticket: TicketRow; payment: PaymentRow } | undefined> {
      return db.transaction().execute(async (trx) => {
        const completed = await trx
          .updateTable('parking_payments')
          .set({ status: 'COMPLETED', failure_reason: null, updated_at: at })
          .where('id', '=', paymentId)
          .where('status', 'in', ['PENDING', 'FAILED'])
          .returning('ticket_id as ticketId')
          .executeTakeFirst();
        if (!completed) return undefined;
        // The live-payment index has already refused a second COMPLETED payment for the ticket,
        // so the ticket is still inside here.
        const paid = await trx
          .updateTable('parking_tickets')
          .set({ status: 'PAID', paid_at: at, current_payment_id: paymentId })
          .where('id', '=', completed.ticketId)
          .where('status', 'in', ['ACTIVE', 'LOST'])
          .returning(TICKET_COLUMNS)
          .executeTakeFirst();
        if (!paid)
          throw new Error(
            `payment ${paymentId} completed for ticket ${completed.ticketId}, which is not inside`,
          );
        await trx
          .updateTable('parking_spots')
          .set({ ticket_id: null, occupied_at: null })
          .where('id', '=', paid.spotId)
          .where('ticket_id', '=', paid.id)
          .execute();
        const row = await payment(paymentId, trx);
        return row && { ticket: paid, payment: row };
      });
    },

    /**
     * A payment's new status, if it is in one of `from`. A payment of an archived ticket (a refund
     * months later) changes in the archive: the live row is gone once the archive has it.
     */
    async setPaymentStatus(
      paymentId: string,
      status: PaymentStatus,
      from: PaymentStatus[],
      at: Date,
      failureReason: string | null = null,
    ): Promise<PaymentRow | undefined> {
      const change = { status, failure_reason: failureReason, updated_at: at };
      const row =
        (await db
          .updateTable('parking_payments')
          .set(change)
          .where('id', '=', paymentId)
          .where('status', 'in', from)
          .returning(PAYMENT_COLUMNS)
          .executeTakeFirst()) ??
        (await db
          .updateTable('parking_payments_archive as parking_payments')
          .set(change)
          .where('id', '=', paymentId)
          .where('status', 'in', from)
          .returning(PAYMENT_COLUMNS)
          .executeTakeFirst());
      return row && numbers(row);
    },

    /**
     * A payment declined or withdrawn: FAILED, and still the ticket's live payment while
     * `retryable` (another card may pay it). Only a payment still waiting or open to another card
     * changes, so a withdrawn one never becomes payable again here.
     */
    async failPayment(
      paymentId: string,
      failureReason: string,
      retryable: boolean,
      at: Date,
    ): Promise<PaymentRow | undefined> {
      const row = await db
        .updateTable('parking_payments')
        .set({ status: 'FAILED', failure_reason: failureReason, retryable, updated_at: at })
        .where('id', '=', paymentId)
        .where((eb) =>
          eb.or([
            eb('status', '=', 'PENDING'),
            eb.and([eb('status', '=', 'FAILED'), eb('retryable', '=', true)]),
          ]),
        )
        .returning(PAYMENT_COLUMNS)
        .executeTakeFirst();
      return row && numbers(row);
    },

    /** A declined payment being paid again with another card: FAILED (still open) → PENDING. */
    async reopenPayment(paymentId: string, at: Date): Promise<PaymentRow | undefined> {
      const row = await db
        .updateTable('parking_payments')
        .set({ status: 'PENDING', failure_reason: null, updated_at: at })
        .where('id', '=', paymentId)
        .where('status', '=', 'FAILED')
        .where('retryable', '=', true)
        .returning(PAYMENT_COLUMNS)
        .executeTakeFirst();
      return row && numbers(row);
    },

    /** A ticket moved to the archive (paid long ago), with its payments oldest first. */
    async archived(ticketId: string): Promise<{ ticket: TicketRow; payments: PaymentRow[] } | undefined> {
      const ticket = await db
        .selectFrom('parking_tickets_archive as parking_tickets')
        .select(TICKET_COLUMNS)
        .where('id', '=', ticketId)
        .executeTakeFirst();
      if (!ticket) return undefined;
      const payments = await db
        .selectFrom('parking_payments_archive as parking_payments')
        .select(PAYMENT_COLUMNS)
        .where('ticket_id', '=', ticketId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return { ticket, payments: payments.map(numbers) };
    },
  };
}

export type ExitRepository = ReturnType<typeof createExitRepository>;

type ExitStateRow = TicketRow & {
  attempts: number | null;
  p_id: string | null;
  p_kind: PaymentRow['kind'] | null;
  p_amountMinor: bigint | null;
  p_currency: string | null;
  p_status: PaymentStatus | null;
  p_paymentUrl: string | null;
  p_failureReason: string | null;
  p_durationMs: bigint | null;
  p_createdAt: Date | null;
  p_updatedAt: Date | null;
  p_retryable: boolean | null;
};

/** Splits a ticket row joined with its current payment (all `p_` columns null when it has none). */
function exitStateOf(row: ExitStateRow): ExitState {
  const {
    attempts,
    p_id,
    p_kind,
    p_amountMinor,
    p_currency,
    p_status,
    p_paymentUrl,
    p_failureReason,
    ...rest
  } = row;
  const { p_durationMs, p_createdAt, p_updatedAt, p_retryable, ...ticket } = rest;
  const current =
    p_id !== null &&
    p_kind !== null &&
    p_amountMinor !== null &&
    p_currency !== null &&
    p_status !== null &&
    p_paymentUrl !== null &&
    p_durationMs !== null &&
    p_createdAt !== null &&
    p_updatedAt !== null
      ? numbers({
          id: p_id,
          ticketId: ticket.id,
          kind: p_kind,
          amountMinor: p_amountMinor,
          currency: p_currency,
          status: p_status,
          paymentUrl: p_paymentUrl,
          failureReason: p_failureReason,
          durationMs: p_durationMs,
          createdAt: p_createdAt,
          updatedAt: p_updatedAt,
          retryable: p_retryable ?? false,
        })
      : undefined;
  return { ticket, current, attempts: attempts ?? 0 };
}
