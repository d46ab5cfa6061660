import { readFileSync } from 'node:fs';

/** This build's version, from package.json (the one file besides src/ every deployment has). */
export const APP_VERSION: string = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
).version;
