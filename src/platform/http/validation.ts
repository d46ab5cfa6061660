import AjvCompiler from '@fastify/ajv-compiler';
import type { FastifySchemaCompiler, FastifyServerOptions } from 'fastify';

type SchemaController = NonNullable<FastifyServerOptions['schemaController']>;
type BuildValidator = AjvCompiler.BuildCompilerFromPool;

/** Bodies of these types arrive as text fields, so their schemas may turn "3600" into 3600. */
const FORM_TYPES = new Set(['application/x-www-form-urlencoded', 'multipart/form-data']);

/**
 * Fastify's `schemaController` with two ajv instances (Fastify's own compiler, built twice). A
 * JSON body is checked as sent: `{"content": 42}` is a 400 naming the field, never the text "42",
 * and `{"is_private": "false"}` never a `true`-ish string taken at its word. A query string, path
 * parameters, headers and form fields are text by nature, so they are coerced to the schema's
 * types as before (`?limit=20`, `/shows/7`).
 */
export function requestValidation(): SchemaController {
  const fromPool = AjvCompiler();
  const buildValidator: BuildValidator = (externalSchemas, options) => {
    // app.ts configures ajv's JSON Schema mode; JTD schemas would need options of their own.
    if (options?.mode === 'JTD') throw new Error('JTD validation is not configured');
    const build = (coerceTypes: false | 'array') =>
      fromPool(externalSchemas, { ...options, customOptions: { ...options?.customOptions, coerceTypes } });
    const exact = build(false);
    const coercing = build('array');
    const compile: FastifySchemaCompiler<unknown> = (route) =>
      route.httpPart === 'body' && !FORM_TYPES.has(route.contentType ?? '') ? exact(route) : coercing(route);
    // @fastify/ajv-compiler declares its compiler as ajv's `compile(schema)`, but Fastify calls it
    // with the route's schema definition (`FastifyRouteSchemaDef`), which is what it reads.
    return compile as unknown as ReturnType<BuildValidator>;
  };
  return { compilersFactory: { buildValidator } };
}
