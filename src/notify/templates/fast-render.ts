import {
  Context,
  type Liquid,
  LiquidError,
  RenderError,
  type Template,
  toValue,
  toValueSync,
  UndefinedVariableError,
} from 'liquidjs';

/**
 * A faster way to render the templates most notifications use: text and `{{ variable.path |
 * filter: 'literal', … }}` outputs, nothing else. liquid interprets every output through a chain
 * of nested generators (evaluate, evalToken, Filter.render…, each driven by `toValueSync`), which
 * was a fifth of a notify worker's CPU for a one-line subject and a two-line body. This walks the
 * parsed template once and keeps, per output, the property path and the filters with their
 * literal arguments; rendering then reads the path and calls the filters directly, through the
 * same liquid `Context` and the same filter functions (the HTML engine's escape filter included),
 * so the output and the errors are liquid's own. Anything else (tags, operators, ranges,
 * variables as filter arguments) is not compiled, and the caller renders it with liquid.
 * `fast-render.test.ts` renders every default template and a set of edge cases both ways.
 */
export type Compiled = (data: Record<string, unknown>, renderOptions: Record<string, unknown>) => string;

interface LiteralToken {
  content: unknown;
}
interface ParsedFilter {
  handler: (...args: unknown[]) => unknown;
  args: unknown[];
  token: unknown;
}
type Piece = string | { template: Template; access: unknown; path: unknown[]; filters: ParsedFilter[] };

const isLiteral = (token: unknown): token is LiteralToken =>
  token !== null && typeof token === 'object' && 'content' in token;

/** The parsed outputs and text as pieces, or undefined when the template uses anything else. */
function piecesOf(templates: Template[]): Piece[] | undefined {
  const pieces: Piece[] = [];
  for (const template of templates) {
    const name = template.constructor.name;
    if (name === 'HTML') {
      pieces.push((template as unknown as { str: string }).str);
      continue;
    }
    if (name !== 'Output') return undefined;
    const { value } = template as unknown as {
      value: {
        initial: { postfix: { constructor: { name: string }; variable?: unknown; props?: unknown[] }[] };
        filters: { handler: ParsedFilter['handler']; args: unknown[]; token: unknown }[];
      };
    };
    const [access, ...more] = value.initial.postfix;
    if (!access || more.length > 0 || access.constructor.name !== 'PropertyAccessToken') return undefined;
    if (access.variable !== undefined || !access.props?.length || !access.props.every(isLiteral))
      return undefined;
    const filters: ParsedFilter[] = [];
    for (const filter of value.filters) {
      if (!filter.args.every(isLiteral)) return undefined;
      filters.push({
        handler: filter.handler,
        args: filter.args.map((arg) => (arg as LiteralToken).content),
        token: filter.token,
      });
    }
    pieces.push({
      template,
      access,
      path: access.props.map((prop) => (prop as LiteralToken).content),
      filters,
    });
  }
  return pieces;
}

/** liquid's own `stringify` (not exported): what an output writes for a value. */
function stringify(value: unknown): string {
  value = toValue(value);
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map(stringify).join('');
  return String(value);
}

/** A compiled renderer for `templates`, or undefined when liquid must render them. */
export function compile(engine: Liquid, templates: Template[]): Compiled | undefined {
  const pieces = piecesOf(templates);
  if (!pieces) return undefined;
  return (data, renderOptions) => {
    // As `renderSync` builds it: limits and globals from the render options.
    const ctx = new Context(data, engine.options, { ...renderOptions, sync: true }, { liquid: engine });
    let out = '';
    for (const piece of pieces) {
      if (typeof piece === 'string') {
        out += piece;
        continue;
      }
      try {
        let value: unknown;
        try {
          value = toValueSync(ctx._get(piece.path as string[]));
        } catch (error) {
          // What liquid's property access throws (with the token's place in the template).
          throw new UndefinedVariableError(error as Error, piece.access as never);
        }
        for (const filter of piece.filters) {
          value = toValueSync(
            filter.handler.apply({ context: ctx, token: filter.token, liquid: engine }, [
              value,
              ...filter.args,
            ]),
          );
        }
        out += stringify(toValue(value));
      } catch (error) {
        // As liquid's renderTemplates: its own errors as they are, others wrapped with the output's place.
        throw LiquidError.is(error) ? error : new RenderError(error as Error, piece.template as never);
      }
    }
    return out;
  };
}
