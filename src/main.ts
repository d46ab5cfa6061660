import './platform/perf/tick-shape.ts';
import cluster from 'node:cluster';
import { type Config, ConfigError, loadConfig } from './platform/config.ts';
import { start } from './server.ts';

/**
 * config → adapters → app → roles (see server.ts). A bad setting exits with one line naming it.
 * `--instances=N` forks N processes sharing the port (Node's cluster module); each is a full
 * instance of the chosen role, so this needs the shared servers (DATABASE_URL at least).
 */
let config: Config;
try {
  config = loadConfig();
  if (config.instances > 1 && !config.databaseUrl) {
    throw new ConfigError('INSTANCES > 1 needs DATABASE_URL (PGlite is a single-process database)');
  }
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`configuration error: ${error.message}\n`);
    process.exit(2);
  }
  throw error;
}

if (config.instances > 1 && cluster.isPrimary) {
  superviseInstances(config.instances);
} else {
  try {
    await start(config);
  } catch (error) {
    // A module's own settings (e.g. the parking lot file) are validated when the module is created.
    if (error instanceof ConfigError) {
      process.stderr.write(`configuration error: ${error.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}

/** Forks the instances, replaces one that dies, and passes SIGTERM/SIGINT on for a graceful stop. */
function superviseInstances(count: number) {
  let stopping = false;
  for (let i = 0; i < count; i++) cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    process.stderr.write(`instance ${worker.process.pid} exited (${signal ?? code}); starting another\n`);
    cluster.fork();
  });
  const stop = (signal: NodeJS.Signals) => {
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
