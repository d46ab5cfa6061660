import { defineErrors } from '../platform/errors.ts';

/** The text sharing service's error codes (problem+json `code`). */
export const pasteError = defineErrors({
  paste_not_found: { status: 404, title: 'No such paste' },
  paste_expired: { status: 410, title: 'The paste has expired' },
  paste_deleted: { status: 410, title: 'The paste has been deleted' },
  password_required: { status: 401, title: 'This paste is protected by a password' },
  wrong_password: { status: 401, title: 'Wrong password' },
  credentials_required: { status: 401, title: 'Credentials are required' },
  invalid_api_key: { status: 401, title: 'The API key is not valid' },
  not_allowed: { status: 403, title: 'You may not do this to this paste' },
  email_taken: { status: 409, title: 'A user with this e-mail already exists' },
  paste_encrypted: {
    status: 409,
    title: 'The paste is end-to-end encrypted: the server has no text to give',
  },
  content_too_large: { status: 413, title: 'The paste is larger than 10 MB' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  content_not_utf8: { status: 422, title: 'The content is not valid UTF-8 text' },
  content_binary: { status: 422, title: 'The content looks binary, not text' },
  invalid_option: { status: 400, title: 'An option is not valid' },
  too_many_pastes: { status: 429, title: 'Too many pastes, slow down' },
  too_many_password_attempts: { status: 429, title: 'Too many wrong passwords, try again later' },
  too_many_signups: { status: 429, title: 'Too many sign-ups from this address, try again later' },
});
