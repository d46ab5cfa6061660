/** A bad setting: the process exits with one line naming the variable (exit code 2). */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
