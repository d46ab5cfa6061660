import {
  CompiledQuery,
  type Kysely,
  type OperationNode,
  type PostgresCursor,
  type PostgresPool,
  type PostgresPoolClient,
  type PostgresQueryResult,
  type RawBuilder,
  RawNode,
  ValueNode,
} from 'kysely';
import type pg from 'pg';

// biome-ignore lint/suspicious/noExplicitAny: runs statements of any module's tables.
type AnyDb = Kysely<any>;

/**
 * The statement texts to run as named prepared statements, with their names. Filled by
 * `createStatements` (a text registered twice keeps its first name); read by every PostgreSQL
 * pool of the process (`preparingPool`).
 */
const preparedNames = new Map<string, string>();

/**
 * Runs hot statements whose text never varies (a batch travels as arrays in a fixed number of
 * parameters) as named prepared statements on PostgreSQL: each pooled connection parses, analyses
 * and plans them once instead of on every call, and planning was most of PostgreSQL's work for
 * the notification claim and much of it for a batch of pastes. PGlite runs them as plain queries.
 * A name must stay unique per text (pg refuses one name with two texts).
 *
 * Kysely has no prepared-statement API, so the statements go through Kysely as usual (its
 * connections, its transactions) and the pool under Kysely's dialect names them (below).
 */
export function createStatements(db: AnyDb, prepare: boolean) {
  async function text<R>(name: string, statement: string, values: readonly unknown[]): Promise<R[]> {
    if (prepare && !preparedNames.has(statement)) preparedNames.set(statement, name);
    return (await db.executeQuery<R>(CompiledQuery.raw(statement, [...values]))).rows;
  }
  // The text of each name, compiled on its first call: a later call whose parameters are plain
  // values takes them straight from the `sql` tag's node instead of compiling the statement
  // again, since compiling showed in the notify workers' CPU profile.
  const texts = new Map<string, string>();
  const isValue = (node: OperationNode) => ValueNode.is(node) && !node.immediate;
  return {
    /** A statement written with Kysely's `sql` tag. */
    query<R>(name: string, query: RawBuilder<R>): Promise<R[]> {
      const node = query.toOperationNode();
      const plain = RawNode.is(node) && node.parameters.every(isValue);
      const statement = plain ? texts.get(name) : undefined;
      if (plain && statement !== undefined) {
        return text<R>(
          name,
          statement,
          node.parameters.map((parameter) => (ValueNode.is(parameter) ? parameter.value : undefined)),
        );
      }
      const compiled = query.compile(db);
      if (plain) texts.set(name, compiled.sql);
      return text<R>(name, compiled.sql, compiled.parameters);
    },
    /** A statement written as text with `$1…$n` placeholders. */
    text,
  };
}

/** How callers waited for a pooled connection, since the pool opened (for /metrics). */
export interface PoolWaits {
  /** Connections handed out. */
  acquired: number;
  /** Seconds spent waiting for them, in all. */
  waitSeconds: number;
  /** Waits that ran out (`poolWaitMs`): each one's request was shed as a 503. */
  timeouts: number;
}

/**
 * The pool Kysely's PostgresDialect is given (its `PostgresPool` interface): pg's pool, whose
 * clients run a text that `createStatements` registered as pg's named statement
 * (`{name, text, values}`) and any other text as before. Every checkout's wait is added to `waits`.
 */
export function preparingPool(pool: pg.Pool, waits: PoolWaits): PostgresPool {
  // One wrapper per pg client: Kysely keeps its connection state per client object.
  const clients = new WeakMap<pg.PoolClient, PreparingClient>();
  return {
    options: pool.options,
    async connect() {
      const started = performance.now();
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        // pg's own wording for a wait past connectionTimeoutMillis; other errors are the server's.
        if (error instanceof Error && error.message.includes('timeout exceeded when trying to connect')) {
          waits.timeouts++;
        }
        throw error;
      }
      waits.acquired++;
      waits.waitSeconds += (performance.now() - started) / 1000;
      let preparing = clients.get(client);
      if (!preparing) {
        preparing = new PreparingClient(client);
        clients.set(client, preparing);
      }
      return preparing;
    },
    end: () => pool.end(),
  };
}

class PreparingClient implements PostgresPoolClient {
  readonly #client: pg.PoolClient;
  constructor(client: pg.PoolClient) {
    this.#client = client;
  }

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(
    sql: string | PostgresCursor<R>,
    parameters: ReadonlyArray<unknown> = [],
  ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    // Kysely streams through a cursor only when its dialect is given a `cursor` class; ours is not.
    if (typeof sql !== 'string') throw new Error('streaming queries are not configured');
    const name = preparedNames.get(sql);
    const values = [...parameters];
    // A text with its values apart, unless named: pg copies a query config object on every call.
    const result =
      name === undefined ? this.#client.query(sql, values) : this.#client.query({ name, text: sql, values });
    // pg types `command` as any string; Kysely lists the tags it acts on, which pg reports as sent.
    return result as Promise<PostgresQueryResult<R>>;
  }

  release(destroy?: boolean): void {
    this.#client.release(destroy);
  }
}
