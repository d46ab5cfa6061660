import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { platformError } from '../platform/errors.ts';
import { ProblemSchema } from '../platform/http/problem.ts';
import type { Payment } from './api.ts';
import { paymentError } from './errors.ts';
import {
  PaymentBody,
  PaymentParams,
  PayRequest,
  RefundRequest,
  SettleRequest,
  WebhookAck,
} from './schemas.ts';
import { type PaymentsService, toJson } from './service.ts';

const tags = ['payments'];

/**
 * Whoever holds a payment's id (its hosted page link) may see and pay it: the id is the
 * capability (README, Limits and choices). Refunds and the sandbox are admin only.
 */
const byPaymentId = { access: { public: true } } as const;
const admin = { access: { admin: true } } as const;
const CAPABILITY = 'The payment id is the capability: whoever holds the payment link may call this.';

export const paymentsRoutes: FastifyPluginAsyncTypebox<{ service: PaymentsService }> = async (
  app,
  { service },
) => {
  const { api } = service;

  app.get(
    '/api/v1/payments/:paymentId',
    {
      config: { links: 'rebase', ...byPaymentId, openapi: { problems: [404] } },
      schema: {
        tags,
        summary: 'A payment',
        description: CAPABILITY,
        params: PaymentParams,
        response: { 200: PaymentBody },
      },
    },
    async (request) => toJson(await service.load(request.params.paymentId)),
  );

  app.post(
    '/api/v1/payments/:paymentId/pay',
    {
      schema: {
        tags,
        summary: 'Pay with a card (what the hosted page does)',
        description:
          '200 COMPLETED; 202 PENDING when the gateway did not answer in time (the outcome follows by webhook); ' +
          '402 payment_declined; 422 invalid card details; 409 when already paid, final or a charge is outstanding. ' +
          CAPABILITY,
        params: PaymentParams,
        body: PayRequest,
        response: { 200: PaymentBody, 202: PaymentBody },
      },
      // Payers are anonymous: their keys are scoped per payment, so two payers never share one.
      config: {
        links: 'rebase',
        ...byPaymentId,
        openapi: { problems: [402, 404, 409, 422] },
        idempotency: {
          scope: 'payments.pay',
          principal: paymentIdOf,
        },
      },
    },
    async (request, reply) => {
      const payment = await api.pay(request.params.paymentId, request.body.payment_details);
      if (payment.status === 'FAILED') throw declined(payment);
      return reply.code(payment.status === 'PENDING' ? 202 : 200).send(toJson(payment));
    },
  );

  app.post(
    '/api/v1/payments/:paymentId/refund',
    {
      schema: {
        tags,
        summary: 'Refund a completed payment, in full or in part',
        params: PaymentParams,
        body: RefundRequest,
        response: { 200: PaymentBody },
      },
      // The admin check runs first (onRequest), so a stranger's key never claims an idempotency row.
      config: {
        links: 'rebase',
        ...admin,
        idempotency: { scope: 'payments.refund' },
        openapi: { problems: [404, 409, 422] },
      },
    },
    async (request) => {
      const { amount, reason } = request.body;
      const payment = await api.refund(request.params.paymentId, {
        reason,
        amountMinor: amount === undefined ? undefined : toMinor(amount),
        idempotencyKey: headerKey(request),
      });
      return toJson(payment);
    },
  );

  app.post(
    '/api/v1/payments/:paymentId/sandbox/settle',
    {
      schema: {
        tags,
        summary: 'Sandbox: settle the outstanding charge of a payment, as the gateway would later',
        description:
          'Sends the signed charge.succeeded / charge.failed webhook and answers once it was handled.',
        params: PaymentParams,
        body: SettleRequest,
        response: { 200: PaymentBody },
      },
      config: { links: 'rebase', ...admin, openapi: { problems: [404, 409] } },
    },
    async (request) => {
      await api.sandbox.settle(request.params.paymentId, request.body.outcome);
      return toJson(await service.load(request.params.paymentId));
    },
  );

  // The signature covers the exact bytes sent, so this route keeps the raw body (its own parser,
  // scoped to this plugin) and parses JSON only after verifying.
  await app.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser(
      'application/json',
      { parseAs: 'string', bodyLimit: 256 * 1024 },
      (_r, body, done) => done(null, body),
    );
    scope.post(
      '/api/v1/payments/webhook',
      {
        // No platform credential: the gateway's HMAC signature, checked below, is the credential.
        config: { access: { public: true } },
        schema: {
          tags,
          summary: 'Payment gateway webhook (charge.succeeded, charge.failed)',
          description:
            'Standard Webhooks signature: headers webhook-id, webhook-timestamp (Unix seconds, within 5 minutes) and ' +
            'webhook-signature "v1,<base64 HMAC-SHA256 of id.timestamp.body>" keyed with PAYMENT_WEBHOOK_SECRET. ' +
            'Bad signature or stale timestamp → 401; an event id seen before → 200 with duplicate: true.',
          response: { 200: WebhookAck, 400: ProblemSchema, 401: ProblemSchema, 415: ProblemSchema },
        },
      },
      async (request) => {
        // Only this scope's JSON parser keeps the raw text; a form or other body is not a gateway event.
        if (typeof request.body !== 'string') {
          throw platformError('unsupported_media_type', 'Webhook events are application/json');
        }
        const result = await service.handleWebhook(request.body, request.headers);
        return { received: true, duplicate: result.duplicate };
      },
    );
  });
};

/** The idempotency hook serves every route, so it sees params untyped; this route's are validated by then. */
function paymentIdOf(request: FastifyRequest): string | undefined {
  const params = request.params;
  if (typeof params !== 'object' || params === null || !('paymentId' in params)) return undefined;
  return typeof params.paymentId === 'string' ? params.paymentId : undefined;
}

function declined(payment: Payment) {
  return paymentError('payment_declined', {
    detail: payment.failureMessage ?? 'The card was declined',
    extras: {
      payment_id: payment.id,
      decline_code: payment.failureCode,
      payment_status: payment.status,
      retry_allowed: payment.allowRetry,
    },
  });
}

function toMinor(amount: number): number {
  const minor = Math.round(amount * 100);
  if (Math.abs(amount * 100 - minor) > 1e-6 || !Number.isSafeInteger(minor)) {
    throw paymentError('invalid_refund', 'amount must have at most two decimals');
  }
  return minor;
}

function headerKey(request: FastifyRequest): string | undefined {
  const key = request.headers['idempotency-key'];
  return typeof key === 'string' ? key : undefined;
}
