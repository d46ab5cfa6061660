import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../../platform/config.ts';
import {
  DAY_NAMES,
  DEFAULT_HOURLY_RATES_MINOR,
  type Pricing,
  type WeekdayPricing,
} from '../pricing/pricing.ts';
import { SPOT_TYPES, type SpotType, VEHICLE_TYPES, type VehicleType } from './allocation.ts';

/** The lot's `reservations` section (README, "Reservations"); absent: the lot takes none. */
export interface ReservationRules {
  /** The most reservations of a spot type live at any one instant (types left out: none). */
  spots: Partial<Record<SpotType, number>>;
  /** A reservation holds a concrete spot from this long before its start. */
  holdAheadMinutes: number;
  /** After its start, a reservation waits this long for the vehicle, then is a no-show. */
  graceMinutes: number;
  /** How far ahead a reservation may start. */
  maxDaysAhead: number;
  /** Live (BOOKED or HELD) reservations one user may have at once. */
  perUser: number;
}

/**
 * The one lot, read from a JSON file (env PARKING_LOT_CONFIG, default demo-lot.json beside this
 * file) and validated whole before anything starts: a mistake stops start-up with a message
 * naming the field, never a half-configured lot. The format is described in README.md.
 */
export interface Panel {
  id: string;
  name: string;
}

export interface FloorConfig {
  floor: number;
  name: string;
  boardId: string;
  spots: { id: string; type: SpotType }[];
}

export interface LotConfig {
  id: string;
  name: string;
  timeZone: string;
  currency: string;
  lostTicketFeeMinor: number;
  /** How long the amount of an unpaid exit holds before a new exit recomputes it. */
  exitGraceMinutes: number;
  pricing: Pricing;
  entryPanels: Panel[];
  exitPanels: Panel[];
  /** In search order: the first floor with a fitting free spot is used. */
  floors: FloorConfig[];
  /** Undefined: the lot takes no reservations. */
  reservations?: ReservationRules;
}

/** A ConfigError, so main.ts reports it as a configuration problem and exits with status 2. */
export class LotConfigError extends ConfigError {
  override name = 'LotConfigError';
}

export const DEMO_LOT_PATH = fileURLToPath(new URL('./demo-lot.json', import.meta.url));
const MAX_SPOTS = 100_000;
const ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/;
const TYPE_LETTER: Record<SpotType, string> = {
  MOTORCYCLE: 'M',
  COMPACT: 'C',
  LARGE: 'L',
  HANDICAPPED: 'H',
  ELECTRIC: 'E',
};

export function loadLotConfig(path: string = DEMO_LOT_PATH): LotConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new LotConfigError(
      `PARKING_LOT_CONFIG: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new LotConfigError(`lot config ${path} is not valid JSON: ${(error as Error).message}`);
  }
  return parseLotConfig(json, path);
}

type Json = Record<string, unknown>;

/** Validates a parsed config; every problem is listed with its path, e.g. `floors[1].spots.LARGE`. */
export function parseLotConfig(json: unknown, source = 'lot config'): LotConfig {
  const problems: string[] = [];
  const problem = (path: string, message: string) => problems.push(`${path} ${message}`);

  const root = object(json, '(root)', problem, [
    'id',
    'name',
    'timeZone',
    'currency',
    'lostTicketFee',
    'exitGraceMinutes',
    'pricing',
    'entryPanels',
    'exitPanels',
    'floors',
    'reservations',
  ]);
  const id = string(root.id, 'id', problem, ID);
  const name = string(root.name, 'name', problem);
  const timeZone = string(root.timeZone, 'timeZone', problem);
  if (timeZone && !isTimeZone(timeZone)) problem('timeZone', `is not an IANA time zone, got "${timeZone}"`);
  const currency = string(root.currency, 'currency', problem, /^[A-Z]{3}$/);
  if (currency && !hasCents(currency))
    problem('currency', `must be a currency with two decimals, got "${currency}"`);
  const lostTicketFeeMinor = money(root.lostTicketFee, 'lostTicketFee', problem);
  const exitGraceMinutes =
    root.exitGraceMinutes === undefined
      ? 15
      : integer(root.exitGraceMinutes, 'exitGraceMinutes', problem, 0, 1440);
  const pricing = parsePricing(root.pricing ?? { strategy: 'hourly' }, 'pricing', problem);

  const panelIds = new Set<string>();
  const panels = (value: unknown, path: string) =>
    array(value, path, problem, 1).map((item, index) => {
      const at = `${path}[${index}]`;
      const panel = object(item, at, problem, ['id', 'name']);
      const panelId = string(panel.id, `${at}.id`, problem, ID);
      if (panelIds.has(panelId)) problem(`${at}.id`, `"${panelId}" is used twice`);
      panelIds.add(panelId);
      return {
        id: panelId,
        name: panel.name === undefined ? panelId : string(panel.name, `${at}.name`, problem),
      };
    });
  const entryPanels = panels(root.entryPanels, 'entryPanels');
  const exitPanels = panels(root.exitPanels, 'exitPanels');

  const floorNumbers = new Set<number>();
  const spotIds = new Set<string>();
  const floors = array(root.floors, 'floors', problem, 1).map((item, index): FloorConfig => {
    const at = `floors[${index}]`;
    const floor = object(item, at, problem, ['floor', 'name', 'code', 'boardId', 'spots']);
    const number = integer(floor.floor, `${at}.floor`, problem, -50, 500);
    if (floorNumbers.has(number)) problem(`${at}.floor`, `${number} appears twice`);
    floorNumbers.add(number);
    const code =
      floor.code === undefined
        ? `F${number}`
        : string(floor.code, `${at}.code`, problem, /^[A-Za-z0-9]{1,8}$/);
    const spots = parseSpots(floor.spots, `${at}.spots`, code, problem);
    for (const spot of spots) {
      if (spotIds.has(spot.id)) problem(`${at}.spots`, `spot id "${spot.id}" is used twice in the lot`);
      spotIds.add(spot.id);
    }
    return {
      floor: number,
      name: floor.name === undefined ? `Floor ${number}` : string(floor.name, `${at}.name`, problem),
      boardId:
        floor.boardId === undefined ? `board-${code}` : string(floor.boardId, `${at}.boardId`, problem, ID),
      spots,
    };
  });
  if (spotIds.size > MAX_SPOTS)
    problem('floors', `hold ${spotIds.size} spots, at most ${MAX_SPOTS} are supported`);
  const reservations =
    root.reservations === undefined ? undefined : parseReservations(root.reservations, floors, problem);

  if (problems.length > 0) {
    throw new LotConfigError(`lot config ${source} is invalid: ${problems.join('; ')}`);
  }
  return {
    id,
    name,
    timeZone,
    currency,
    lostTicketFeeMinor,
    exitGraceMinutes,
    pricing,
    entryPanels,
    exitPanels,
    floors,
    ...(reservations ? { reservations } : {}),
  };
}

/** `reservations`: per spot type at most the lot's spots of that type. */
function parseReservations(value: unknown, floors: FloorConfig[], problem: Problem): ReservationRules {
  const path = 'reservations';
  const section = object(value, path, problem, [
    'spots',
    'holdAheadMinutes',
    'graceMinutes',
    'maxDaysAhead',
    'perUser',
  ]);
  const counts = object(section.spots, `${path}.spots`, problem, SPOT_TYPES);
  const spots: ReservationRules['spots'] = {};
  for (const type of SPOT_TYPES) {
    if (counts[type] === undefined) continue;
    const inLot = floors.reduce(
      (sum, floor) => sum + floor.spots.filter((spot) => spot.type === type).length,
      0,
    );
    const count = integer(counts[type], `${path}.spots.${type}`, problem, 0, MAX_SPOTS);
    if (count > inLot)
      problem(`${path}.spots.${type}`, `is ${count}, but the lot has ${inLot} ${type} spots`);
    spots[type] = count;
  }
  const minutes = (key: string, fallback: number, min: number, max: number) =>
    section[key] === undefined ? fallback : integer(section[key], `${path}.${key}`, problem, min, max);
  return {
    spots,
    holdAheadMinutes: minutes('holdAheadMinutes', 60, 0, 1440),
    graceMinutes: minutes('graceMinutes', 30, 0, 1440),
    maxDaysAhead: minutes('maxDaysAhead', 30, 1, 366),
    perUser: minutes('perUser', 5, 1, 100),
  };
}

/** Either `[{"id": "A1", "type": "COMPACT"}, …]` or counts per type, `{"COMPACT": 20}` (ids F1-C01 …). */
function parseSpots(value: unknown, path: string, code: string, problem: Problem): FloorConfig['spots'] {
  if (Array.isArray(value)) {
    if (value.length === 0) problem(path, 'must list at least one spot');
    return value.map((item, index) => {
      const at = `${path}[${index}]`;
      const spot = object(item, at, problem, ['id', 'type']);
      return {
        id: string(spot.id, `${at}.id`, problem, ID),
        type: oneOf(spot.type, `${at}.type`, problem, SPOT_TYPES),
      };
    });
  }
  const counts = object(value, path, problem, SPOT_TYPES);
  const spots: FloorConfig['spots'] = [];
  for (const type of SPOT_TYPES) {
    if (counts[type] === undefined) continue;
    const count = integer(counts[type], `${path}.${type}`, problem, 0, MAX_SPOTS);
    const width = Math.max(2, String(count).length);
    for (let n = 1; n <= count; n++) {
      spots.push({ id: `${code}-${TYPE_LETTER[type]}${String(n).padStart(width, '0')}`, type });
    }
  }
  if (spots.length === 0 && Object.keys(counts).length > 0) problem(path, 'must hold at least one spot');
  return spots;
}

function parsePricing(value: unknown, path: string, problem: Problem): Pricing {
  const kind = typeof value === 'object' && value !== null ? (value as Json).strategy : undefined;
  if (kind === 'weekend') {
    const pricing = object(value, path, problem, ['strategy', 'weekday', 'weekendMultiplier', 'weekendDays']);
    const multiplier = pricing.weekendMultiplier;
    const basisPoints = typeof multiplier === 'number' ? Math.round(multiplier * 10_000) : Number.NaN;
    if (
      !(
        basisPoints > 0 &&
        basisPoints <= 1_000_000 &&
        Math.abs(basisPoints - (multiplier as number) * 10_000) < 1e-6
      )
    ) {
      problem(`${path}.weekendMultiplier`, `must be a number above 0 and up to 100 with at most 4 decimals`);
    }
    const days =
      pricing.weekendDays === undefined
        ? ['SATURDAY', 'SUNDAY']
        : array(pricing.weekendDays, `${path}.weekendDays`, problem, 1);
    const weekday = parsePricing(pricing.weekday, `${path}.weekday`, problem);
    if (weekday.strategy === 'weekend') problem(`${path}.weekday`, 'must be an hourly or flat strategy');
    return {
      strategy: 'weekend',
      weekday: weekday as WeekdayPricing,
      multiplierBasisPoints: basisPoints,
      weekendDays: days.map((day, index) =>
        DAY_NAMES.indexOf(oneOf(day, `${path}.weekendDays[${index}]`, problem, DAY_NAMES)),
      ),
    };
  }
  if (kind === 'flat') {
    const pricing = object(value, path, problem, ['strategy', 'flatRate']);
    return { strategy: 'flat', flatRateMinor: money(pricing.flatRate, `${path}.flatRate`, problem) };
  }
  if (kind === 'hourly') {
    const pricing = object(value, path, problem, ['strategy', 'rates']);
    const ratesMinor = { ...DEFAULT_HOURLY_RATES_MINOR };
    if (pricing.rates !== undefined) {
      const rates = object(pricing.rates, `${path}.rates`, problem, VEHICLE_TYPES);
      for (const type of VEHICLE_TYPES) {
        if (rates[type] !== undefined)
          ratesMinor[type as VehicleType] = money(rates[type], `${path}.rates.${type}`, problem);
      }
    }
    return { strategy: 'hourly', ratesMinor };
  }
  problem(`${path}.strategy`, `must be one of hourly|flat|weekend, got ${JSON.stringify(kind)}`);
  return { strategy: 'flat', flatRateMinor: 0 };
}

type Problem = (path: string, message: string) => void;

function object(value: unknown, path: string, problem: Problem, allowed: readonly string[]): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problem(path, 'must be an object');
    return {};
  }
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key))
      problem(
        `${path === '(root)' ? '' : `${path}.`}${key}`,
        `is not a known field (known: ${allowed.join(', ')})`,
      );
  }
  return value as Json;
}

function array(value: unknown, path: string, problem: Problem, min: number): unknown[] {
  if (!Array.isArray(value)) {
    problem(path, 'must be a list');
    return [];
  }
  if (value.length < min) problem(path, `must have at least ${min} item${min === 1 ? '' : 's'}`);
  return value;
}

function string(value: unknown, path: string, problem: Problem, pattern?: RegExp): string {
  if (typeof value !== 'string' || value.trim() === '') {
    problem(path, 'must be a non-empty string');
    return '';
  }
  if (pattern && !pattern.test(value)) problem(path, `must match ${pattern}, got "${value}"`);
  return value;
}

function oneOf<T extends string>(value: unknown, path: string, problem: Problem, allowed: readonly T[]): T {
  if (!allowed.includes(value as T))
    problem(path, `must be one of ${allowed.join('|')}, got ${JSON.stringify(value)}`);
  return value as T;
}

function integer(value: unknown, path: string, problem: Problem, min: number, max: number): number {
  if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) {
    problem(path, `must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
    return 0;
  }
  return value as number;
}

/** An amount in major units with at most two decimals (2.5 → 250 minor units). */
function money(value: unknown, path: string, problem: Problem): number {
  const minor = typeof value === 'number' ? Math.round(value * 100) : Number.NaN;
  if (!(minor >= 0 && minor <= 100_000_000 && Math.abs(minor - (value as number) * 100) < 1e-6)) {
    problem(
      path,
      `must be an amount from 0 to 1000000 with at most two decimals, got ${JSON.stringify(value)}`,
    );
    return 0;
  }
  return minor;
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function hasCents(currency: string): boolean {
  try {
    return (
      new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ===
      2
    );
  } catch {
    return false;
  }
}
