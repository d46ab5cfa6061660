/**
 * An OpenAPI document's value with its local `$ref`s to shared responses and headers followed,
 * however deep: what a client generator or Swagger UI reads there. Schema references are checked
 * to point somewhere and stay as they are.
 */
export function resolveRefs<T>(document: object, value: T): T {
  if (Array.isArray(value)) return value.map((item) => resolveRefs(document, item)) as T;
  if (value === null || typeof value !== 'object') return value;
  const ref = (value as { $ref?: unknown }).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    const target = ref
      .slice(2)
      .split('/')
      .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], document);
    if (target === undefined) throw new Error(`${ref} points nowhere`);
    // The Problem schema stays a reference: every problem names it, and the tests compare that.
    return ref.startsWith('#/components/schemas/') ? value : resolveRefs(document, target as T);
  }
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, resolveRefs(document, item)]),
  ) as T;
}
