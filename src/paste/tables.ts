import type { Generated, Kysely, Selectable } from 'kysely';

/**
 * The text sharing service's tables (migrations/index.ts), as Kysely sees them. Type aliases, not
 * interfaces: Kysely needs each table to be indexable by column name.
 */
export type PasteTables = {
  paste_users: PasteUsersTable;
  paste_contents: PasteContentsTable;
  pastes: PastesTable;
};

export type PasteUsersTable = {
  id: Generated<bigint>;
  email: string;
  /** SHA-256 of the API key: the key itself is shown once and never stored. */
  api_key_hash: string;
  created_at: Date;
};

/** One row per SHA-256 of a paste's text, shared by every paste with that text. */
export type PasteContentsTable = {
  hash: string;
  /** The text, zstd-compressed (`encoding`). */
  data: Uint8Array;
  encoding: Generated<string>;
  /** Bytes of UTF-8 before compression. */
  size: number;
  /** Bumped by every create that stores this text; the cleanup keeps recently touched blobs. */
  touched_at: Date;
};

export type DeletedReason = 'expired' | 'deleted' | 'burned';

export type PastesTable = {
  /** A sequence value (`paste_id_seq`), taken before the insert: it decides the short_url. */
  id: bigint;
  short_url: string;
  content_hash: string;
  content_type: Generated<string>;
  syntax: string | null;
  created_at: Date;
  expires_at: Date | null;
  user_id: bigint | null;
  views: Generated<bigint>;
  is_private: Generated<boolean>;
  password_hash: string | null;
  burn_after_read: Generated<boolean>;
  delete_token_hash: string;
  size: number;
  deleted_at: Date | null;
  deleted_reason: DeletedReason | null;
  /** 'aes-256-gcm' for an end-to-end encrypted paste (its content is the envelope), null otherwise. */
  encryption: string | null;
};

export type PasteDb = Kysely<PasteTables>;
export type PasteRow = Selectable<PastesTable>;
export type UserRow = Pick<Selectable<PasteUsersTable>, 'id' | 'email' | 'created_at'>;
/** What a create stores in `pastes` (the content's hash travels with the content). */
export type NewPaste = Omit<
  PasteRow,
  'views' | 'deleted_at' | 'deleted_reason' | 'content_hash' | 'encryption'
> & {
  encryption?: string | null;
};
