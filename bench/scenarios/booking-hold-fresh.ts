import { randomInt } from 'node:crypto';
import type { Scenario } from '../run.ts';
import holdScenario, {
  admit,
  auditShow,
  createHotShows,
  guest,
  HOLD_LOAD,
  inBatches,
  rowLabel,
} from './booking-hold.ts';

/**
 * The hold path itself: `booking-hold`'s clients, but every request asks for 1 to 3 seats nobody
 * holds yet, so each is a hold the arbiter grants (user token and admission checks, seat lookup,
 * the arbiter's conditional UPDATE in a transaction, cache drop). `booking-hold` sells its show
 * out in the warm-up and then measures the refusals of a sold-out show.
 *
 * The seats are handed out in order over 48 hot shows of 12,000 seats (every client admitted to
 * each), a request's seats always in one show; past the last show the run starts over from the
 * first, whose seats are held by then, and `verify` says how many requests that was.
 */
const CLIENTS = HOLD_LOAD.connections;
const SHOWS = 48;
const ROWS = 120;
const SEATS_PER_ROW = 100;
const SEATS = ROWS * SEATS_PER_ROW;

interface Run {
  shows: string[];
  /** Seats handed out so far, over all shows in order. */
  cursor: number;
  wrapped: number;
}
const runs = new Map<string, Run>();

/** The next 1 to 3 seats nobody asked for yet, all in one show. */
function nextSeats(run: Run): { show: number; seats: string[] } {
  const count = randomInt(1, 4);
  let show = Math.floor(run.cursor / SEATS);
  let first = run.cursor % SEATS;
  if (first + count > SEATS) {
    show++;
    first = 0;
  }
  if (show >= SHOWS) {
    show = 0;
    run.wrapped++;
  }
  run.cursor = show * SEATS + first + count;
  const seats = Array.from({ length: count }, (_, i) => {
    const seat = first + i;
    return `${rowLabel(Math.floor(seat / SEATS_PER_ROW))}${(seat % SEATS_PER_ROW) + 1}`;
  });
  return { show, seats };
}

const scenario: Scenario = {
  description: `POST /api/v1/shows/{id}/hold: ${CLIENTS} clients, seats nobody holds yet over ${SHOWS} hot shows of ${SEATS} seats, PostgreSQL`,
  ...HOLD_LOAD,
  // Seats are what a run uses up: 4 s of warm-up is enough for the arbiter's code and pools.
  warmup: 4,
  async prepare(base) {
    const run: Run = { shows: await createHotShows(base, ROWS, SEATS_PER_ROW, SHOWS), cursor: 0, wrapped: 0 };
    runs.set(base, run);
    const guests = await inBatches(CLIENTS, () => guest(base));
    const tokens: string[][] = [];
    for (const show of run.shows) tokens.push(await inBatches(CLIENTS, (i) => admit(base, show, guests[i])));
    return {
      requests: [
        {
          method: 'POST',
          path: `/api/v1/shows/${run.shows[0]}/hold`,
          headers: { 'content-type': 'application/json' },
          setupRequest: (request) => {
            const client = randomInt(CLIENTS);
            const { show, seats } = nextSeats(run);
            return {
              ...request,
              path: `/api/v1/shows/${run.shows[show]}/hold`,
              headers: { ...request.headers, authorization: guests[client].authorization },
              // user_id as well, for older versions of the code (bench/ab.ts); it names the token's user.
              body: JSON.stringify({
                seat_ids: seats,
                user_id: guests[client].user,
                admission_token: tokens[show][client],
              }),
            };
          },
        },
      ],
    };
  },
  baselineRequest: holdScenario.baselineRequest,
  async verify(base) {
    const run = runs.get(base)!;
    let holds = 0;
    let seats = 0;
    for (const show of run.shows) {
      const audit = await auditShow(base, show);
      if (audit.double_booked_seats !== 0 || audit.incomplete_holds !== 0) {
        throw new Error(`the arbiter failed on show ${show}: ${JSON.stringify(audit)}`);
      }
      holds += Number(audit.live_holds);
      seats += Number(audit.held_seats);
    }
    return [
      `audit of ${SHOWS} shows: ${holds} holds stored, ${seats} of ${SHOWS * SEATS} seats held; 0 held twice, 0 incomplete holds`,
      run.wrapped === 0
        ? 'every request asked for seats nobody had asked for'
        : `the seats ran out ${run.wrapped} time(s): later requests asked for seats already held`,
    ];
  },
};
export default scenario;
