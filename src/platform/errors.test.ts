import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AppError, defineErrors, platformError } from './errors.ts';

const err = defineErrors({
  seats_unavailable: { status: 409, title: 'Seats not available' },
  broken: { status: 503, title: 'Broken' },
});

describe('errors from a catalogue', () => {
  test('an error carries its code, status, title, detail, extras and cause', () => {
    const cause = new Error('why');
    const error = err('seats_unavailable', {
      detail: 'Seat C7 is not available',
      extras: { seats: ['C7'] },
      cause,
    });
    assert.ok(error instanceof AppError);
    assert.ok(error instanceof Error);
    assert.deepEqual(
      [error.code, error.status, error.title, error.message, error.extras, error.cause],
      ['seats_unavailable', 409, 'Seats not available', 'Seat C7 is not available', { seats: ['C7'] }, cause],
    );
  });

  test('an error has the stack trace of where it was made', () => {
    assert.match(String(err('seats_unavailable').stack), /\n\s+at .*errors\.test\.ts/);
    assert.match(String(err('broken').stack), /\n\s+at .*errors\.test\.ts/);
    assert.match(String(platformError('internal_error').stack), /\n\s+at /);
    assert.match(String(new Error('plain').stack), /\n\s+at /);
  });
});
