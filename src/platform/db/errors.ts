/** A unique violation from node-postgres or PGlite, optionally of one constraint (index). */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: string; constraint?: string; message?: string } | undefined;
  if (e?.code !== '23505') return false;
  return constraint === undefined || e.constraint === constraint || !!e.message?.includes(constraint);
}
