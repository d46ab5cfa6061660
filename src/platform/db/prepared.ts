import {
  CompiledQuery,
  type Kysely,
  type OperationNode,
  type RawBuilder,
  type RawNode,
  type ValueNode,
} from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: runs statements of any module's tables.
type AnyDb = Kysely<any>;

/**
 * Runs hot statements whose text never varies (a batch travels as arrays in a fixed number of
 * parameters) as named prepared statements on PostgreSQL: each pooled connection parses, analyses
 * and plans them once instead of on every call. Planning was most of PostgreSQL's CPU for the
 * notification claim and a quarter of it for a batch of pastes (bench/README.md). PGlite runs
 * them as plain queries. A name must stay unique per text (pg refuses one name with two texts).
 *
 * Kysely hands the compiled `sql` to pg's `client.query`, which also takes a `{name, text}`
 * config: that is how the name reaches pg without leaving Kysely's connection handling.
 */
export function createStatements(db: AnyDb, prepare: boolean) {
  async function text<R>(name: string, statement: string, values: readonly unknown[]): Promise<R[]> {
    const config = prepare ? ({ name, text: statement } as unknown as string) : statement;
    return (await db.executeQuery<R>(CompiledQuery.raw(config, [...values]))).rows;
  }
  // The text of each name, compiled on its first call: a later call whose parameters are plain
  // values takes them straight from the `sql` tag's node instead of compiling the statement again
  // (Kysely's compile showed as 3–5 % of a notify worker's CPU).
  const texts = new Map<string, string>();
  const isValue = (node: OperationNode) => node.kind === 'ValueNode' && !(node as ValueNode).immediate;
  return {
    /** A statement written with Kysely's `sql` tag. */
    query<R>(name: string, query: RawBuilder<R>): Promise<R[]> {
      const node = query.toOperationNode() as RawNode;
      const plain = node.kind === 'RawNode' && node.parameters.every(isValue);
      const statement = plain ? texts.get(name) : undefined;
      if (statement !== undefined) {
        return text<R>(
          name,
          statement,
          node.parameters.map((parameter) => (parameter as ValueNode).value),
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
