export { providerMigrations } from './migrations.ts';
