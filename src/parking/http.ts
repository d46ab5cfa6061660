/** Route config the parking features share: the OpenAPI tag and who may call what (README, Access). */
export const tags = ['parking'];

/** Each route declares who may call it; the platform enforces it. */
export const access = {
  public: { access: { public: true } },
  /** A public read: a weak ETag and revalidation (platform/http/conditional.ts). */
  publicRead: { access: { public: true }, cache: 'revalidate' },
  panel: { access: { operator: 'parking:panel' } },
  attendant: { access: { operator: 'parking:attendant' } },
  admin: { access: { admin: true } },
} as const;
