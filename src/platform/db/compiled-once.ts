import type { Compilable, CompiledQuery, QueryResult } from 'kysely';

/** What runs a compiled query: a Kysely instance or a transaction of it. */
export interface QueryRunner {
  executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>>;
}

/** Stands for argument `index` while the query is built. */
class Slot {
  readonly index: number;
  constructor(index: number) {
    this.index = index;
  }
}

/**
 * A query of Kysely's builder that is built and compiled on its first call only; later calls put
 * their values into the compiled statement. Building a query (parsing each column reference,
 * freezing every node) and compiling it (a walk of the whole tree) is most of what the builder
 * costs, and a hot read or write has the same shape on every call: the builder keeps the query
 * typed and readable, and the hot path pays for it once.
 *
 * `build` runs on the first call only: with a stand-in for each argument, then with that call's
 * values to check the text. It must hand each argument to the builder as a value
 * (`where('id', '=', id)`, `` sql`any(${ids}::uuid[])` ``), never look at it or branch on it, so
 * that the statement's text cannot depend on the values: an array travels as one parameter
 * (`= any(…)`), never as an `in (…)` list, whose length would change the text. The first call
 * refuses an argument that does not reach the statement as a parameter, and a text other than
 * the one its own values build (which an `in` list always gives).
 */
export function compiledOnce<Args extends unknown[], Row>(
  arity: Args['length'],
  build: (...args: Args) => Compilable<Row>,
) {
  let template: { compiled: CompiledQuery<Row>; slots: number[] } | undefined;

  /** Builds with stand-ins; then once with the first call's values, which must give the same text. */
  function compile(first: Args) {
    const standIns = Array.from({ length: arity }, (_, index) => new Slot(index)) as Args;
    const compiled = build(...standIns).compile();
    const slots = compiled.parameters.map((parameter) => (parameter instanceof Slot ? parameter.index : -1));
    for (let index = 0; index < arity; index++) {
      if (!slots.includes(index)) {
        throw new Error(`compiledOnce: argument ${index} is not a parameter of the statement`);
      }
    }
    // An array given to an `in` list is a list of parameters, a stand-in one parameter.
    if (build(...first).compile().sql !== compiled.sql) {
      throw new Error('compiledOnce: the statement text depends on the values (an `in` list?)');
    }
    return { compiled, slots };
  }

  /** Runs the statement with these values, on `runner` (the database, or a transaction). */
  return async (runner: QueryRunner, ...args: Args): Promise<QueryResult<Row>> => {
    template ??= compile(args);
    const { compiled, slots } = template;
    const parameters = compiled.parameters.map((parameter, i) =>
      slots[i] === -1 ? parameter : args[slots[i]],
    );
    return runner.executeQuery({ ...compiled, parameters });
  };
}
