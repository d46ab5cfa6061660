import { defineErrors } from '../platform/errors.ts';

/** The notification service's error codes (problem+json `code`), documented in README.md. */
export const err = defineErrors({
  unknown_type: { status: 422, title: 'No template exists for this notification type and channel' },
  unknown_channel: { status: 422, title: 'Unknown channel' },
  missing_variables: { status: 422, title: 'The data lacks variables the templates use' },
  idempotency_key_reused: { status: 422, title: 'This notification id was used with a different request' },
  notifications_rate_limited: {
    status: 429,
    title: 'Every requested channel is over its per-user limit',
  },
  invalid_send_at: { status: 422, title: 'send_at must be now or later, and not too far ahead' },
  notification_not_cancellable: {
    status: 409,
    title: 'The notification is being sent or was sent; nothing is left to cancel',
  },
  invalid_digest: { status: 422, title: 'The digest window is not valid' },
  digest_not_found: { status: 404, title: 'This notification type is not digestible' },
  notification_not_found: { status: 404, title: 'No such notification' },
  dead_letter_not_found: { status: 404, title: 'No such dead letter' },
  feed_item_not_found: { status: 404, title: 'No such item in this feed' },
  push_subscription_not_found: { status: 404, title: 'No such push subscription' },
  push_endpoint_refused: { status: 422, title: 'The push endpoint must be an https URL on a public address' },
  push_endpoint_unresolved: { status: 503, title: 'The push endpoint could not be checked right now' },
  push_subscriptions_limit: { status: 409, title: 'This user holds the most push subscriptions allowed' },
  invalid_cursor: { status: 400, title: 'The cursor is not one this API gave out' },
  invalid_batch: { status: 422, title: 'The batch is not valid' },
  invalid_preferences: { status: 422, title: 'The preferences are not valid' },
  unsubscribe_link_invalid: { status: 404, title: 'No such unsubscribe link' },
  template_not_found: { status: 404, title: 'No such template' },
  template_exists: { status: 409, title: 'A template with this id already exists' },
  template_invalid: { status: 422, title: 'The template does not parse' },
  template_partial_refused: {
    status: 422,
    title: 'include, render and layout may only name another stored template',
  },
  template_id_mismatch: { status: 422, title: 'The channel does not match the template id' },
  template_render_failed: { status: 422, title: 'The template could not be rendered with this data' },
});
