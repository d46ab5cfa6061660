import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AppError, defineErrors, platformError } from './errors.ts';

const err = defineErrors({
  seats_unavailable: { status: 409, title: 'Seats not available' },
  broken: { status: 503, title: 'Broken' },
});

describe('errors from a catalogue', () => {
  test('a 4xx is built without a stack trace (an expected outcome), with everything else as usual', () => {
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
    assert.equal(error.stack, 'AppError: Seat C7 is not available');
    assert.doesNotMatch(String(platformError('not_found').stack), /\n\s+at /);
  });

  test('a 5xx keeps its stack trace, and the stack trace limit is left as it was', () => {
    const limit = Error.stackTraceLimit;
    err('seats_unavailable');
    assert.equal(Error.stackTraceLimit, limit);
    assert.match(String(err('broken').stack), /\n\s+at .*errors\.test\.ts/);
    assert.match(String(platformError('internal_error').stack), /\n\s+at /);
    assert.match(String(new Error('plain').stack), /\n\s+at /);
  });
});
