import type { Clock } from '../../platform/clock.ts';
import { uuidv7 } from '../../platform/ids.ts';
import type { RowSeatType } from '../tables.ts';
import { addDays, localDate, zonedInstant } from '../time.ts';
import type { CatalogueRepository, MovieRow, NewShow } from './repository.ts';
import type { ScreenCreate } from './schemas.ts';
import { seatsFor } from './shapes.ts';

const TIMEZONE = 'Asia/Kolkata';
const CITIES = [
  {
    name: 'Mumbai',
    state: 'Maharashtra',
    theaters: [
      ['Galaxy Cinemas Andheri', 'Andheri West'],
      ['Regal Plaza Colaba', 'Colaba Causeway'],
    ],
  },
  {
    name: 'Delhi',
    state: 'Delhi',
    theaters: [
      ['Connaught Picture House', 'Connaught Place'],
      ['Saket Starlight', 'Saket'],
    ],
  },
  {
    name: 'Bengaluru',
    state: 'Karnataka',
    theaters: [
      ['Indiranagar Screens', '100 Feet Road, Indiranagar'],
      ['Whitefield Cineplex', 'ITPL Main Road, Whitefield'],
    ],
  },
  {
    name: 'Chennai',
    state: 'Tamil Nadu',
    theaters: [
      ['Marina Talkies', 'Triplicane'],
      ['Velachery Grand', 'Velachery Main Road'],
    ],
  },
  {
    name: 'Hyderabad',
    state: 'Telangana',
    theaters: [
      ['Banjara Hills Cinemas', 'Road No. 1, Banjara Hills'],
      ['Hitech City Multiplex', 'Madhapur'],
    ],
  },
];

const MOVIES: Omit<MovieRow, 'id'>[] = [
  movie(
    'The Last Monsoon',
    'Drama',
    'Hindi',
    148,
    '2025-11-14',
    8.4,
    'A fisherman waits for the rain that saves his village.',
  ),
  movie(
    'Orbit of Silence',
    'Sci-Fi, Thriller',
    'English',
    132,
    '2025-12-05',
    8.1,
    'A lone engineer hears a voice on a dead satellite.',
  ),
  movie(
    'Kaala Samundar',
    'Action, Adventure',
    'Hindi',
    156,
    '2025-12-19',
    7.6,
    'Smugglers, a storm and a coast guard with a grudge.',
  ),
  movie(
    'Midnight Express Lane',
    'Thriller',
    'English',
    118,
    '2025-10-31',
    7.2,
    'One night, one taxi, eleven stops and a secret.',
  ),
  movie(
    'Chennai Nights',
    'Romance, Drama',
    'Tamil',
    141,
    '2025-11-28',
    7.9,
    'Two musicians share a flat and a deadline.',
  ),
  movie(
    'Paper Kites',
    'Animation, Family',
    'English',
    96,
    '2025-12-12',
    8.0,
    'A kite that will not come down takes a girl across the city.',
  ),
  movie(
    'Iron Ledger',
    'Action',
    'Telugu',
    162,
    '2025-12-25',
    7.4,
    'An accountant finds the one number that can topple a cartel.',
  ),
  movie(
    'Whispering Dunes',
    'Adventure',
    'Hindi',
    137,
    '2025-09-19',
    6.9,
    'A caravan crosses the Thar with a map nobody trusts.',
  ),
  movie(
    'The Quantum Heist',
    'Sci-Fi, Action',
    'English',
    127,
    '2025-11-07',
    7.8,
    'A crew robs a bank that exists in two places at once.',
  ),
  movie(
    'Laughter Express',
    'Comedy',
    'Hindi',
    122,
    '2025-10-10',
    6.7,
    'A wedding party boards the wrong train.',
  ),
  movie(
    'Bengaluru Blues',
    'Comedy, Drama',
    'Kannada',
    129,
    '2025-12-01',
    7.3,
    'A startup founder moves back in with his parents.',
  ),
  movie(
    'Interstellar Drift',
    'Sci-Fi, Drama',
    'English',
    151,
    '2025-08-22',
    8.6,
    'A crew drifts past a black hole to find a new home.',
  ),
];

/**
 * Screens the size of real ones (a multiplex's 150 to 400 seats), blocks split by aisles, a
 * cross-aisle row with wheelchair spaces, each with its companion seat beside it.
 */
const SCREENS: ScreenCreate[] = [
  // 320 seats: 4 | 12 | 4 across, A–L regular, M–P premium at the back.
  layout(
    1,
    'Standard',
    [
      ['A', 'L', 20, 'REGULAR'],
      ['M', 'P', 20, 'PREMIUM'],
    ],
    { REGULAR: 180, PREMIUM: 280 },
    { aisles: [4, 16], access: { row: 'A', wheelchair: [1, 20], companion: [2, 19] } },
  ),
  // 384 seats: 6 | 12 | 6 across, A–M regular, N–P premium.
  layout(
    2,
    'IMAX',
    [
      ['A', 'M', 24, 'REGULAR'],
      ['N', 'P', 24, 'PREMIUM'],
    ],
    { REGULAR: 350, PREMIUM: 500 },
    { aisles: [6, 18], access: { row: 'H', wheelchair: [1, 2, 23, 24], companion: [3, 22] } },
  ),
  // 96 recliners in pairs: 2 | 8 | 2 across, rows A–H.
  layout(
    3,
    'Gold Recliner',
    [['A', 'H', 12, 'RECLINER']],
    { RECLINER: 750 },
    {
      aisles: [2, 10],
      access: { row: 'H', wheelchair: [1, 12], companion: [2, 11] },
    },
  ),
];
const SHOW_TIMES = ['11:00', '15:00', '19:30'];
const DAYS = 7;

/**
 * Loads the demo catalogue into an empty database: 5 cities, 10 theaters, 20 screens, 12 movies
 * and a week of shows from today (the clock's), about 400 shows and 118,000 seat rows, in bulk
 * inserts. Idempotent and safe when several processes start at once (advisory lock + emptiness
 * check in one transaction). One evening show is marked hot, to show the waiting room.
 */
export async function loadDemoCatalogue(repo: CatalogueRepository, clock: Clock): Promise<boolean> {
  return repo.db.transaction().execute(async (tx) => {
    await repo.lock(tx, 'booking.demo_catalogue');
    if (await repo.hasCities(tx)) return false;
    const now = clock.now();
    const movies = MOVIES.map((entry) => ({ ...entry, id: uuidv7(), created_at: now }));
    await repo.insertMovies(movies, tx);
    const today = localDate(now, TIMEZONE);
    const shows: NewShow[] = [];
    let screenIndex = 0;
    for (const city of CITIES) {
      const cityId = uuidv7();
      await repo.insertCity(
        { id: cityId, name: city.name, state: city.state, timezone: TIMEZONE, created_at: now },
        tx,
      );
      for (const [theaterIndex, [name, area]] of city.theaters.entries()) {
        const theaterId = uuidv7();
        const screens = theaterIndex === 0 ? SCREENS : [SCREENS[0]];
        const theater = {
          id: theaterId,
          city_id: cityId,
          name,
          address: `${area}, ${city.name}`,
          created_at: now,
        };
        await repo.insertTheater(theater, tx);
        for (const screen of screens) {
          const screenId = uuidv7();
          const seats = seatsFor(screen).map((seat) => ({ ...seat, screen_id: screenId }));
          const { screen_number, screen_type } = screen;
          const row = { id: screenId, theater_id: theaterId, screen_number, screen_type, created_at: now };
          await repo.insertScreen(tx, row, seats);
          screenIndex++;
          for (let day = 0; day < DAYS; day++) {
            const date = addDays(today, day);
            for (const [slot, time] of SHOW_TIMES.entries()) {
              const start = zonedInstant(date, time, TIMEZONE);
              if (start.getTime() <= now.getTime()) continue;
              const film = movies[(screenIndex * 3 + day + slot) % movies.length];
              shows.push({
                id: uuidv7(),
                movie_id: film.id,
                screen_id: screenId,
                show_time: start,
                end_time: new Date(start.getTime() + film.duration_minutes * 60_000),
                price_multiplier: time === '19:30' ? 1.2 : 1,
                is_hot:
                  city.name === 'Mumbai' &&
                  theaterIndex === 0 &&
                  screen.screen_number === 2 &&
                  day === 1 &&
                  time === '19:30',
                created_at: now,
              });
            }
          }
        }
      }
    }
    await repo.insertShows(tx, shows);
    return true;
  });
}

function movie(
  title: string,
  genres: string,
  language: string,
  duration: number,
  release: string,
  rating: number,
  description: string,
): Omit<MovieRow, 'id'> {
  return {
    title,
    description,
    duration_minutes: duration,
    language,
    genres: genres.split(', '),
    release_date: release,
    poster_url: null,
    rating,
  };
}

function layout(
  number: number,
  type: string,
  blocks: [string, string, number, RowSeatType][],
  prices: ScreenCreate['prices'],
  plan: { aisles: number[]; access: { row: string; wheelchair: number[]; companion: number[] } },
): ScreenCreate {
  const rows = blocks.flatMap(([from, to, seats, seatType]) => {
    const list: ScreenCreate['rows'] = [];
    for (let code = from.charCodeAt(0); code <= to.charCodeAt(0); code++) {
      const row = String.fromCharCode(code);
      const access = row === plan.access.row ? plan.access : undefined;
      list.push({
        row,
        seats,
        seat_type: seatType,
        aisles_after: plan.aisles,
        ...(access ? { wheelchair: access.wheelchair, companion: access.companion } : {}),
      });
    }
    return list;
  });
  return { screen_number: number, screen_type: type, rows, prices };
}
