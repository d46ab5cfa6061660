import {
  atLeast,
  createUuid7Function,
  DAY_MS,
  inChunks,
  type SeedContext,
  type ServiceSeed,
  share,
} from './common.ts';

/** spec/notifications.md: 100 M users, about 12,000 notifications a second on average. */
const USERS = 100_000_000;
const PER_SECOND = 12_000;
const DAYS = 30;
/** Statements per day: bounds the size of one temporary table whatever the scale. */
const PARTS_PER_DAY = 4;

/** A user pool with preferences: contacts for every user, some channels off, some quiet hours. */
async function insertPreferences(context: SeedContext, users: number): Promise<void> {
  await context.client.query(
    `insert into notify_preferences (user_id, push_enabled, sms_enabled, email_enabled, quiet_hours_start,
       quiet_hours_end, timezone, email, phone, locale, updated_at, version)
     select 'seed-user-' || n, random() > 0.1, random() > 0.2, random() > 0.05,
       case when n % 5 = 0 then time '22:00' end, case when n % 5 = 0 then time '07:00' end,
       (array['UTC', 'Asia/Kolkata', 'America/New_York', 'Europe/Berlin'])[1 + n % 4],
       'seed-user-' || n || '@example.test', '+1555' || lpad((n % 10000000)::text, 7, '0'),
       (array[null, 'en', 'hi', 'de'])[1 + n % 4],
       $2::timestamptz - interval '90 days' + random() * interval '60 days', 1 + n % 3
     from generate_series(1, $1::int) n`,
    [users, context.now],
  );
}

/**
 * One part of a day: notifications with their kind and channels drawn (1 channel 60 %, 2 30 %,
 * 3 10 %), then each delivery's outcome and try count. Outcomes: 93 % sent or delivered (most on
 * the first try, 6 % on the second, 2 % the third), 3 % skipped, 1 % rate limited, 0.5 % failed
 * for good, 0.5 % dead-lettered after the 5 tries of the default retry schedule.
 */
const DRAW_NOTIFICATIONS = `
  create temp table seed_notifications on commit drop as
  select pg_temp.uuid7(created_at) as id, created_at, user_id, type,
    case type when 'security_alert' then 'critical' when 'marketing' then 'low'
      when 'booking_confirmed' then 'high' when 'booking_cancelled' then 'high' else 'normal' end as priority,
    case when type = 'marketing' then 'batch' else 'realtime' end as lane,
    case when client_draw < 0.3 then 'c-' || md5(random()::text) end as client_id,
    case when channel_draw < 0.6 then array[(array['email', 'push', 'sms'])[1 + floor(random() * 3)::int]]
         when channel_draw < 0.9 then string_to_array((array['email,push', 'email,sms', 'push,sms'])
           [1 + floor(random() * 3)::int], ',')
         else array['push', 'sms', 'email'] end as channels
  from (
    select $1::timestamptz + random() * $2::interval as created_at,
      'seed-user-' || (1 + floor(random() * $3::int)::int) as user_id,
      (array['booking_confirmed', 'booking_confirmed', 'booking_confirmed', 'booking_reminder', 'booking_reminder',
             'security_alert', 'marketing', 'marketing', 'marketing', 'refund_update', 'booking_cancelled'])
        [1 + floor(random() * 11)::int] as type,
      random() as client_draw, random() as channel_draw
    from generate_series(1, $4::int)
  ) drawn`;

const INSERT_NOTIFICATIONS = `
  insert into notifications (id, user_id, client_id, request_hash, type, priority, lane, batch_id, data, accepted,
    created_at)
  select id, user_id, client_id, case when client_id is not null then md5(id::text) || md5(user_id) end,
    type, priority, lane,
    case when lane = 'batch' then pg_temp.uuid7(date_trunc('day', created_at)) end,
    jsonb_build_object('booking_id', gen_random_uuid(), 'movie_title', 'Orbit of Silence',
      'theater_name', 'Galaxy Cinemas Andheri', 'show_time', created_at + interval '2 days',
      'seats', jsonb_build_array('F7', 'F8'), 'total_paid', 560),
    jsonb_build_object('id', id, 'status', 'accepted', 'channels',
      (select jsonb_agg(jsonb_build_object('channel', c, 'status', 'queued')) from unnest(channels) c)),
    created_at
  from seed_notifications`;

/** Each delivery with its outcome; `tries` counts every provider call, as `attempts` does. */
const DRAW_DELIVERIES = `
  create temp table seed_deliveries on commit drop as
  select id, channel, user_id, lane, type, created_at,
    case when d < 0.03 then 'skipped' when d < 0.04 then 'rate_limited' when d < 0.045 then 'failed'
         when d < 0.05 then 'dead_lettered' when channel = 'sms' or d < 0.5 then 'delivered' else 'sent' end
      as status,
    case when d < 0.04 then 0 when d < 0.045 then 1 when d < 0.05 then 5
         when r < 0.02 then 3 when r < 0.08 then 2 else 1 end as tries
  from (
    select n.id, c.channel, n.user_id, n.lane, n.type, n.created_at, random() as d, random() as r
    from seed_notifications n cross join lateral unnest(n.channels) as c(channel)
  ) drawn`;

/** Retry delays of the default schedule (immediate, +1 min, +5 min, +30 min, +2 h), cumulative. */
const TRY_OFFSET = `(array[interval '0', interval '1 minute', interval '6 minutes', interval '36 minutes',
  interval '156 minutes'])`;

const INSERT_DELIVERIES = `
  insert into notification_deliveries (notification_id, channel, user_id, lane, status, reason, content, provider,
    provider_message_id, attempts, created_at, scheduled_for, published_at, sent_at, delivered_at, updated_at)
  select id, channel, user_id, lane, status,
    case status when 'skipped' then 'channel_disabled' when 'rate_limited' then 'daily_limit'
      when 'failed' then 'invalid_address: the provider refused the address'
      when 'dead_lettered' then 'provider_unavailable: timeout after 10000 ms' end,
    case when status in ('sent', 'delivered') then initcap(replace(type, '_', ' ')) ||
      ': Orbit of Silence at Galaxy Cinemas Andheri, seats F7 F8. Show your QR code at the entrance.' end,
    case when tries > 0 then case channel when 'email' then 'smtp' when 'sms' then 'http' else 'webpush' end end,
    case when status in ('sent', 'delivered') then gen_random_uuid()::text end,
    tries, created_at, null, created_at + interval '40 milliseconds',
    case when status in ('sent', 'delivered') then created_at + ${TRY_OFFSET}[tries] + interval '300 milliseconds' end,
    case when status = 'delivered' then created_at + ${TRY_OFFSET}[tries] + interval '4 seconds' end,
    created_at + ${TRY_OFFSET}[greatest(tries, 1)] + interval '4 seconds'
  from seed_deliveries`;

/** A row per failed try only: the app records a successful try on the delivery itself. */
const INSERT_ATTEMPTS = `
  insert into notification_attempts (notification_id, channel, attempt, at, error, provider)
  select id, channel, attempt, created_at + ${TRY_OFFSET}[attempt] + interval '10 seconds',
    case when status = 'failed' then 'invalid_address: the provider refused the address'
         else 'provider_unavailable: timeout after 10000 ms' end,
    case channel when 'email' then 'smtp' when 'sms' then 'http' else 'webpush' end
  from seed_deliveries cross join lateral generate_series(1, tries) attempt
  where status in ('failed', 'dead_lettered') or attempt < tries`;

async function insertPart(context: SeedContext, start: Date, spanMs: number, count: number) {
  const { client } = context;
  await client.query('begin');
  await client.query(DRAW_NOTIFICATIONS, [start, `${spanMs} milliseconds`, users(context), count]);
  await client.query(INSERT_NOTIFICATIONS);
  await client.query(DRAW_DELIVERIES);
  await client.query(INSERT_DELIVERIES);
  await client.query(INSERT_ATTEMPTS);
  await client.query('commit');
}

const users = (context: SeedContext) => atLeast(100, USERS * context.scale);

async function run(context: SeedContext): Promise<Record<string, string>> {
  await createUuid7Function(context.client);
  await insertPreferences(context, users(context));
  const total = Math.round(PER_SECOND * 86_400 * DAYS * context.scale);
  const parts = DAYS * PARTS_PER_DAY;
  const spanMs = DAY_MS / PARTS_PER_DAY;
  const first = context.now.getTime() - DAYS * DAY_MS;
  await inChunks(
    context,
    'notify quarter-days',
    parts,
    (part) => insertPart(context, new Date(first + part * spanMs), spanMs, share(total, parts, part)),
    PARTS_PER_DAY,
  );
  return {};
}

export const notifySeed: ServiceSeed = {
  name: 'notify',
  recordTable: 'notifications',
  recordName: 'notification',
  recordTables: ['notifications', 'notification_deliveries', 'notification_attempts'],
  run,
};
