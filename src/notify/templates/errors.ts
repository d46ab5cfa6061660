import { defineErrors } from '../../platform/errors.ts';

/** Template error codes (problem+json `code`); see README.edge.md. */
export const templateError = defineErrors({
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
