import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { UserTokens } from './user-tokens.ts';

const Guest = Type.Object({
  user_id: Type.String({ format: 'uuid' }),
  token: Type.String({
    description: 'Send as Authorization: Bearer <token>; it proves the caller is this user',
  }),
});

/** `POST /api/v1/guests`: a new user id and the token proving it (guest checkout, no sign-up). */
export function registerGuestRoute(app: FastifyInstance, tokens: UserTokens) {
  app.post(
    '/api/v1/guests',
    {
      config: { access: { public: true } },
      schema: {
        tags: ['users'],
        summary: 'A new guest identity: a random user id and its token',
        description:
          'Send `token` as `Authorization: Bearer` on everything this user does (holds, bookings, the ' +
          'waiting room, their notification preferences and history): the token decides the user. ' +
          'Tokens are never issued for an existing user id.',
        response: { 201: Guest },
      },
    },
    async (_request, reply) => {
      const userId = randomUUID();
      return reply.code(201).send({ user_id: userId, token: tokens.issue(userId) });
    },
  );
}
