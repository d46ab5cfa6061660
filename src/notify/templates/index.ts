/** What the notify module imports from templates (see README.edge.md). */
export { defaultTemplates } from './defaults.ts';
export { templateError } from './errors.ts';
export { templateMigrations } from './migrations.ts';
export { createTemplateRenderer, type TemplateRendererOptions, type TemplateStore } from './renderer.ts';
export { type TemplateRouteDeps, templateRoutes } from './routes.ts';
