import { createGroup } from '../../platform/db/group.ts';
import type { ClaimResult, NewHold, SeatsRepository } from './repository.ts';

/**
 * Group commit for holds. With one statement and one commit per hold, many clients on one hot
 * show keep the app waiting on PostgreSQL's commits (the booking-hold bench scenario). Holds of
 * one show that arrive while a batch is being written go together in one transaction and one
 * commit (`repository.claimMany`: the same seat-order row locks as `claimSeats`, then each hold
 * decided in arrival order).
 *
 * Every caller gets what `claimSeats` would have given it: all of its seats, or a refusal naming
 * the seats that are taken — in the table, or by an earlier hold of the same batch — and a
 * refusal is that hold's alone. When a batch fails as a whole (e.g. a statement error rolls it
 * back), each of its holds is decided by `claimSeats` on its own. PostgreSQL stays the arbiter.
 */
export function createHoldBatcher(
  repository: Pick<SeatsRepository, 'claimSeats' | 'claimMany'>,
  options: { maxBatch?: number; maxInFlight?: number } = {},
) {
  const claim = createGroup<{ hold: NewHold; now: Date }, ClaimResult>({
    one: ({ hold, now }) => repository.claimSeats(hold, now),
    many: (inputs) =>
      repository.claimMany(
        inputs.map((input) => input.hold),
        // The latest clock reading of the batch: a seat whose hold ended before it counts as free.
        new Date(Math.max(...inputs.map((input) => input.now.getTime()))),
      ),
    kind: ({ hold }) => hold.show_id,
    // One user's holds go one batch after another: a batch locks each of its users' hold counters
    // until it commits, so two batches in flight that shared a user would wait for each other, and
    // the second would find that user's count moved and decide their hold alone after all.
    key: ({ hold }) => hold.user_id,
    exclusive: true,
    // A user whose holds changed while the batch counted them (another process's hold) is decided
    // alone, after it.
    retry: (result) => result.retry === true,
    // A hot show's thousand clients keep the queue full: a larger batch spreads each transaction's
    // fixed cost (its round trips, commit and statement starts) over more holds, until its locks
    // and writes make it the slow one (bench/README.md, booking-hold-fresh: 250 against 100 and 500).
    maxBatch: options.maxBatch ?? 250,
    maxInFlight: options.maxInFlight,
  });
  return { claim: (hold: NewHold, now: Date) => claim({ hold, now }) };
}

export type HoldBatcher = ReturnType<typeof createHoldBatcher>;
