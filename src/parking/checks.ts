import { platformError } from '../platform/errors.ts';
import { err } from './errors.ts';
import { normalisePlate } from './lot/allocation.ts';

/** Input checks shared by entry and exit, and the database error the arbiter raises. */
export function plateOrThrow(raw: string): string {
  const plate = normalisePlate(raw);
  if (plate) return plate;
  throw platformError('validation_failed', {
    detail: 'body.licensePlate must be 1 to 10 letters and digits (spaces, dashes and dots are ignored)',
    extras: { errors: [{ field: 'body.licensePlate', message: 'is not a licence plate' }] },
  });
}

export function panelOrThrow(
  id: string | undefined,
  panels: { id: string }[],
  kind: 'entry' | 'exit',
): string | null {
  if (id === undefined) return null;
  if (panels.some((panel) => panel.id === id)) return id;
  throw err('unknown_panel', {
    detail: `No ${kind} panel "${id}"; this lot has ${panels.map((panel) => panel.id).join(', ')}`,
  });
}

export function alreadyParked(plate: string) {
  return err(
    'vehicle_already_parked',
    `${plate} is already parked here; it must exit before it can enter again`,
  );
}
