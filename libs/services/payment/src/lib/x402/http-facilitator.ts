import { type PaymentPayload, type PaymentRequirements, type SettleResponse, type VerifyResponse, type X402Facilitator } from './x402.types';

/**
 * A remote x402 facilitator (the facilitator HTTP API: `POST /verify`, `POST /settle`, each with
 * `{ x402Version, paymentPayload, paymentRequirements }`). It is the only kind that moves money on a chain, so it is
 * the only kind production configurations may use. A facilitator that cannot be reached, answers an error status or
 * something that is not a verdict counts as a refusal — never as a payment.
 */
export class HttpFacilitator implements X402Facilitator {
  constructor(private readonly baseUrl: string, private readonly timeoutMs: number) {}

  async verify(payment: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    const body = await this.post('verify', payment, requirements);
    if (!body || typeof body['isValid'] !== 'boolean') return { isValid: false, invalidReason: 'facilitator_unavailable' };
    return body['isValid']
      ? { isValid: true, ...(typeof body['payer'] === 'string' ? { payer: body['payer'] } : {}) }
      : { isValid: false, invalidReason: 'facilitator_refused' };
  }

  async settle(payment: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    const body = await this.post('settle', payment, requirements);
    const ok = body?.['success'] === true && typeof body['transaction'] === 'string' && body['transaction'] !== '';
    if (!ok) return { success: false, errorReason: body ? 'facilitator_refused' : 'facilitator_unavailable', transaction: '', network: requirements.network };
    return {
      success: true, transaction: String(body!['transaction']), network: requirements.network,
      ...(typeof body!['payer'] === 'string' ? { payer: body!['payer'] } : {}),
    };
  }

  private async post(path: 'verify' | 'settle', paymentPayload: PaymentPayload, paymentRequirements: PaymentRequirements): Promise<Record<string, unknown> | undefined> {
    try {
      const r = await fetch(new URL(path, this.baseUrl.endsWith('/') ? this.baseUrl : `${this.baseUrl}/`), {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ x402Version: 2, paymentPayload, paymentRequirements }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      if (!r.ok) return undefined;
      const body: unknown = await r.json();
      return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  }
}
