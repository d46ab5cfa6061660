import { type Env, envReader } from '../platform/env.ts';
import { DEMO_LOT_PATH } from './lot/config.ts';

/** Parking's settings, read once at start-up through the platform's env reader. */
export interface ParkingSettings {
  /** PARKING_LOT_CONFIG: the lot's JSON file (README, "The lot file"); default the demo lot. */
  lotConfigPath: string;
  /** PARKING_TICKET_ARCHIVE_AFTER: a paid ticket moves to the archive this long after it was paid. */
  archiveAfterMs: number;
  /** PARKING_PANEL_IDLE_RESET: a panel left untouched this long clears itself for the next driver. */
  panelIdleResetMs: number;
  /** PARKING_PANEL_DONE_RESET: how long "Paid — the gate opens" stays before the panel clears. */
  panelDoneResetMs: number;
  /** PARKING_LIVE_RESYNC: how often a process re-reads the boards and tickets it streams. */
  liveResyncMs: number;
}

export function loadParkingSettings(env: Env): ParkingSettings {
  const read = envReader(env);
  return {
    lotConfigPath: read.string('PARKING_LOT_CONFIG', DEMO_LOT_PATH),
    // A minute at least (tests and soak runs), ten years at most.
    archiveAfterMs: read.duration('PARKING_TICKET_ARCHIVE_AFTER', '90d', 60_000, 3650 * 86_400_000),
    // A driver paying on a phone needs a while; any touch or key press starts the wait again.
    panelIdleResetMs: read.duration('PARKING_PANEL_IDLE_RESET', '2m', 1000, 3_600_000),
    panelDoneResetMs: read.duration('PARKING_PANEL_DONE_RESET', '10s', 1000, 600_000),
    liveResyncMs: read.duration('PARKING_LIVE_RESYNC', '10s', 1000, 600_000),
  };
}
