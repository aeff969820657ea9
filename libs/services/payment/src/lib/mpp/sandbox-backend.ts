/** One payment as the sandbox backend records it (by its reference: the MPP challenge id). */
export interface SandboxPayment {
  reference: string;
  kind: 'charge' | 'authorize';
  amount: string;
  currency: string;
  captured?: string;
  at: string;
}

/** What a call to the backend established: done (what it recorded), refused (its stated reason), or nothing known. */
export type BackendOutcome =
  | { kind: 'done'; payment: SandboxPayment }
  | { kind: 'refused'; reason: string }
  | { kind: 'unknown'; problem: string };

/**
 * The sandbox payment method's backend over HTTP, as the method's verification and the collection worker speak to it.
 * Only a 4xx with a reason is a stated refusal; a timeout, a dropped connection or a 5xx is an unknown outcome, decided
 * later by the backend's own record of the reference (`GET /payments/<reference>`).
 */
export class SandboxBackend {
  readonly name: string;

  constructor(private readonly url: string, private readonly timeoutMs: number, private readonly token?: string) {
    this.name = `mpp:${new URL(url).origin}`;
  }

  pay(kind: 'charge' | 'authorize', reference: string, p: { token: string; amount: string; currency: string }): Promise<BackendOutcome> {
    return this.post(`/${kind}`, { ...p, reference });
  }

  capture(reference: string, amount: bigint): Promise<BackendOutcome> {
    return this.post('/capture', { reference, amount: amount.toString() });
  }

  /** The backend's record of a reference: found, none, or unknown (it could not be read). */
  async record(reference: string): Promise<{ kind: 'found'; payment: SandboxPayment } | { kind: 'none' } | { kind: 'unknown'; problem: string }> {
    try {
      const res = await fetch(`${this.url}/payments/${encodeURIComponent(reference)}`, { headers: this.headers(), signal: AbortSignal.timeout(this.timeoutMs) });
      if (res.status === 404) return { kind: 'none' };
      if (!res.ok) return { kind: 'unknown', problem: `record: HTTP ${res.status}` };
      return { kind: 'found', payment: (await res.json()) as SandboxPayment };
    } catch (error) {
      return { kind: 'unknown', problem: `record: ${problemOf(error)}` };
    }
  }

  private async post(path: string, body: Record<string, unknown>): Promise<BackendOutcome> {
    try {
      const res = await fetch(`${this.url}${path}`, {
        method: 'POST', headers: { 'content-type': 'application/json', ...this.headers() }, body: JSON.stringify(body), signal: AbortSignal.timeout(this.timeoutMs),
      });
      const answer = (await res.json().catch(() => ({}))) as { error?: unknown } & SandboxPayment;
      if (res.ok) return { kind: 'done', payment: answer };
      if (res.status >= 400 && res.status < 500 && typeof answer.error === 'string') return { kind: 'refused', reason: answer.error.slice(0, 80) };
      return { kind: 'unknown', problem: `${path}: HTTP ${res.status}` };
    } catch (error) {
      return { kind: 'unknown', problem: `${path}: ${problemOf(error)}` };
    }
  }

  private headers(): Record<string, string> {
    return this.token ? { authorization: `Bearer ${this.token}` } : {};
  }
}

function problemOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  return `${error instanceof Error ? error.message : String(error)}${cause && typeof cause.code === 'string' ? ` (${cause.code})` : ''}`.slice(0, 300);
}
