import { type Env, envReader } from '../platform/env.ts';
import { DEMO_LOT_PATH } from './lot/config.ts';

/** Parking's settings, read once at start-up through the platform's env reader. */
export interface ParkingSettings {
  /** PARKING_LOT_CONFIG: the lot's JSON file (README, "The lot file"); default the demo lot. */
  lotConfigPath: string;
  /** PARKING_TICKET_ARCHIVE_AFTER: a paid ticket moves to the archive this long after it was paid. */
  archiveAfterMs: number;
}

export function loadParkingSettings(env: Env): ParkingSettings {
  const read = envReader(env);
  return {
    lotConfigPath: read.string('PARKING_LOT_CONFIG', DEMO_LOT_PATH),
    // A minute at least (tests and soak runs), ten years at most.
    archiveAfterMs: read.duration('PARKING_TICKET_ARCHIVE_AFTER', '90d', 60_000, 3650 * 86_400_000),
  };
}
