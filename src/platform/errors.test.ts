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

  test('without a detail, or with an empty one, the title is the detail', () => {
    assert.equal(err('seats_unavailable').message, 'Seats not available');
    assert.equal(err('seats_unavailable', '').message, 'Seats not available');
    assert.equal(err('seats_unavailable', { detail: '' }).message, 'Seats not available');
  });

  test('a failure (5xx) has the stack trace of where it was made; a refusal (4xx) records none', () => {
    assert.match(String(err('broken').stack), /\n\s+at .*errors\.test\.ts/);
    assert.match(String(platformError('internal_error').stack), /\n\s+at /);
    assert.equal(err('seats_unavailable').stack, undefined);
    assert.equal(String(err('seats_unavailable', 'Seat C7 is taken')), 'AppError: Seat C7 is taken');
  });
});
